"""The OpenAI-compatible backend with the real ``openai`` SDK against a fake server.

``tests/peers/servers/openai_peer.py`` speaks the chat-completions wire format, so these
tests exercise the real client: request body, retries and backoff, timeouts,
concurrency, token accounting and error translation.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypedDict

import pytest

from tests.peers.servers.openai_peer import ChatReply, FakeOpenAI, prompt_token_count
from tests.peers.servers.search_peers import closed_port

from zofia_engine.config import OpenAISettings
from zofia_engine.errors import (
    LLMConfigError,
    LLMRateLimitedError,
    LLMResponseError,
    LLMTimeoutError,
)
from zofia_engine.llm.base import ChatMessage, CompletionRequest
from zofia_engine.llm.openai_backend import OpenAIBackend
from zofia_engine.llm.structured import bounded_schema

pytest.importorskip("openai")

MODEL = "fake-model"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"type": "string"}},
    "required": ["verdict"],
    "additionalProperties": False,
}

# What a llama.cpp grammar gets: every free-text string bounded to close within max_tokens.
BOUNDED = bounded_schema(SCHEMA, 512)


def ask(text: str = "Is the sky green?", **kw: Any) -> CompletionRequest:
    messages = [ChatMessage("system", "You check facts."), ChatMessage("user", text)]
    return CompletionRequest(messages=messages, model=MODEL, **kw)


@asynccontextmanager
async def backend_for(peer: FakeOpenAI, **kw: Any) -> AsyncIterator[OpenAIBackend]:
    kw.setdefault("backoff_s", 0.01)
    kw.setdefault("timeout_s", 5.0)
    backend = OpenAIBackend(base_url=peer.base_url, api_key=kw.pop("api_key", "sk-test"), **kw)
    try:
        yield backend
    finally:
        await backend.aclose()


# ------------------------------------------------------------------ happy paths


async def test_plain_text_completion() -> None:
    async with FakeOpenAI(lambda body: "The sky is blue.") as peer, backend_for(peer) as llm:
        done = await llm.complete(ask(max_tokens=64, temperature=0.0))
    assert done.text == "The sky is blue."
    assert done.model == MODEL
    assert done.finish_reason == "stop"
    assert done.attempts == 1
    assert done.logprobs is None
    assert llm.name == "openai" and llm.mode is None  # learnt from the first schema request
    [body] = peer.requests
    assert body["model"] == MODEL
    assert body["messages"] == [
        {"role": "system", "content": "You check facts."},
        {"role": "user", "content": "Is the sky green?"},
    ]
    assert body["max_tokens"] == 64 and body["temperature"] == 0.0
    assert "response_format" not in body and "logprobs" not in body
    assert peer.headers[0]["Authorization"] == "Bearer sk-test"


async def test_json_schema_request_body() -> None:
    async with (
        FakeOpenAI(lambda body: '{"verdict": "false"}') as peer,
        backend_for(peer, structured_output="json_schema") as llm,
    ):
        done = await llm.complete(ask(schema=SCHEMA, schema_name="verdict"))
    assert done.text == '{"verdict": "false"}'
    assert peer.requests[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True},
    }


@pytest.mark.parametrize(
    ("mode", "expected", "in_prompt"),
    [
        ("json_object_schema", {"type": "json_object", "schema": BOUNDED}, False),
        ("json_object", {"type": "json_object"}, True),
        ("none", None, True),
    ],
)
async def test_the_other_modes(mode: str, expected: dict[str, Any] | None, in_prompt: bool) -> None:
    async with FakeOpenAI() as peer, backend_for(peer, structured_output=mode) as llm:
        await llm.complete(ask(schema=SCHEMA))
        await llm.complete(ask())  # no schema: never a response_format
    assert llm.structured is (not in_prompt)
    assert peer.requests[0].get("response_format") == expected
    last = peer.requests[0]["messages"][-1]["content"]
    # Where the server does not enforce the schema, the model reads it in the prompt.
    assert ('"required":["verdict"]' in last) is in_prompt
    assert "response_format" not in peer.requests[1]
    assert peer.requests[1]["messages"][-1]["content"] == "Is the sky green?"


# ------------------------------------------------- structured output, learnt per server


class _ServerTraits(TypedDict):
    """How a server takes structured output (``FakeOpenAI``'s keywords)."""

    formats: tuple[str, ...]
    refusal_status: int


LLAMA_CPP_PYTHON: _ServerTraits = {"formats": ("text", "json_object"), "refusal_status": 500}


async def test_auto_keeps_json_schema_where_the_server_takes_it() -> None:
    async with FakeOpenAI() as peer, backend_for(peer) as llm:
        await llm.complete(ask(schema=SCHEMA))
        await llm.complete(ask(schema=SCHEMA))
    assert llm.mode == "json_schema" and peer.calls == 2
    assert [r["response_format"]["type"] for r in peer.requests] == ["json_schema"] * 2


async def test_auto_learns_llama_cpp_pythons_json_object_with_schema(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("INFO", logger="zofia_engine.llm.openai_backend")
    async with FakeOpenAI(**LLAMA_CPP_PYTHON) as peer, backend_for(peer, retries=3) as llm:
        first = await llm.complete(ask(schema=SCHEMA))
        second = await llm.complete(ask(schema=SCHEMA))
    assert first.text == second.text == "ok"
    # The refused json_schema is not retried (a 500 naming a field is not passing), and
    # the second request goes straight to the mode that worked.
    assert peer.calls == 3
    kinds = [r["response_format"] for r in peer.requests]
    assert kinds[0]["type"] == "json_schema"
    assert kinds[1] == kinds[2] == {"type": "json_object", "schema": BOUNDED}
    assert llm.mode == "json_object_schema"
    learnt = [r for r in caplog.records if "takes structured output" in r.getMessage()]
    assert len(learnt) == 1 and "json_object_schema" in learnt[0].getMessage()


async def test_auto_falls_back_to_the_schema_in_the_prompt() -> None:
    async with FakeOpenAI(formats=("text",)) as peer, backend_for(peer) as llm:
        await llm.complete(ask(schema=SCHEMA))
    assert llm.mode == "none"
    assert [r.get("response_format", {}).get("type") for r in peer.requests] == [
        "json_schema",
        "json_object",
        "json_object",
        None,
    ]
    assert '"required":["verdict"]' in peer.requests[-1]["messages"][-1]["content"]


async def test_concurrent_first_requests_learn_once() -> None:
    async with FakeOpenAI(**LLAMA_CPP_PYTHON) as peer, backend_for(peer) as llm:
        await asyncio.gather(*(llm.complete(ask(f"q{i}", schema=SCHEMA)) for i in range(5)))
    assert peer.calls == 6  # one refusal, then five accepted requests


async def test_an_explicit_mode_is_obeyed_and_a_refusal_names_the_setting() -> None:
    async with (
        FakeOpenAI(**LLAMA_CPP_PYTHON) as peer,
        backend_for(peer, structured_output="json_schema", retries=3) as llm,
    ):
        with pytest.raises(LLMConfigError) as info:
            await llm.complete(ask(schema=SCHEMA))
    assert peer.calls == 1
    assert info.value.setting == "llm.openai.structured_output"
    assert "change llm.openai.structured_output" in str(info.value)
    assert llm.mode == "json_schema"


async def test_refused_logprobs_are_dropped_for_good() -> None:
    async with FakeOpenAI(logprobs=False, refusal_status=500) as peer, backend_for(peer) as llm:
        first = await llm.complete(ask(top_logprobs=3))
        second = await llm.complete(ask(top_logprobs=3))
    assert first.logprobs is None and second.logprobs is None
    assert [bool(r.get("logprobs")) for r in peer.requests] == [True, False, False]


async def test_model_falls_back_to_the_backend_default() -> None:
    async with FakeOpenAI() as peer, backend_for(peer, model="other-model") as llm:
        done = await llm.complete(CompletionRequest(messages=[ChatMessage("user", "hi")]))
    assert peer.requests[0]["model"] == "other-model"
    assert done.model == "other-model"


async def test_from_settings() -> None:
    async with FakeOpenAI(api_key="sk-s") as peer:
        settings = OpenAISettings(
            base_url=peer.base_url, api_key="sk-s", model=MODEL, structured_output="json_object"
        )
        llm = OpenAIBackend.from_settings(settings, timeout_s=3.0, retries=1)
        try:
            done = await llm.complete(CompletionRequest(messages=[ChatMessage("user", "x")]))
        finally:
            await llm.aclose()
    assert done.text == "ok" and peer.requests[0]["model"] == MODEL
    assert not llm.structured and llm.timeout_s == 3.0 and llm.retries == 1


# --------------------------------------------------------------- retries and errors


async def test_429_then_success_honours_retry_after() -> None:
    async with FakeOpenAI() as peer, backend_for(peer, backoff_s=0.0) as llm:
        peer.script(ChatReply(status=429, headers={"Retry-After": "0.3"}, error="slow down"))
        done = await llm.complete(ask())
    assert peer.calls == 2
    assert done.attempts == 2 and done.text == "ok"
    assert done.latency_ms >= 300


async def test_retry_after_ms_header_is_honoured() -> None:
    async with FakeOpenAI() as peer, backend_for(peer, backoff_s=0.0) as llm:
        peer.script(ChatReply(status=429, headers={"retry-after-ms": "250"}))
        done = await llm.complete(ask())
    assert done.attempts == 2 and done.latency_ms >= 250


async def test_persistent_429_raises_rate_limited() -> None:
    rate_limited = ChatReply(status=429, headers={"Retry-After": "0"}, error="Rate limit reached")
    async with FakeOpenAI(lambda body: rate_limited) as peer, backend_for(peer, retries=2) as llm:
        with pytest.raises(LLMRateLimitedError) as info:
            await llm.complete(ask())
    assert peer.calls == 3
    assert info.value.backend == f"openai:{MODEL}"
    assert "Rate limit reached" in str(info.value)


async def test_retry_after_beyond_the_cap_fails_fast() -> None:
    quota = ChatReply(status=429, headers={"Retry-After": "3600"}, error="quota")
    async with FakeOpenAI(lambda body: quota) as peer, backend_for(peer, retries=3) as llm:
        with pytest.raises(LLMRateLimitedError, match="3600"):
            await llm.complete(ask())
    assert peer.calls == 1  # given up at once: no wait, no retry


async def test_hanging_server_times_out() -> None:
    hang = ChatReply(hang=True)
    async with (
        FakeOpenAI(lambda b: hang) as peer,
        backend_for(peer, timeout_s=0.3, retries=0) as llm,
    ):
        with pytest.raises(LLMTimeoutError) as info:
            await llm.complete(ask())
    assert peer.calls == 1
    assert "0.3 s" in str(info.value)


async def test_hang_then_success_with_one_retry() -> None:
    async with FakeOpenAI(lambda body: "late but fine") as peer:
        peer.script(ChatReply(hang=True))
        async with backend_for(peer, timeout_s=0.3, retries=1) as llm:
            done = await llm.complete(ask())
    assert done.text == "late but fine"
    assert peer.calls == 2 and done.attempts == 2
    assert done.latency_ms >= 300


async def test_500_then_success() -> None:
    async with FakeOpenAI() as peer, backend_for(peer) as llm:
        peer.script(ChatReply(status=500, error="The server had an error"), ChatReply(status=503))
        done = await llm.complete(ask())
    assert peer.calls == 3 and done.attempts == 3 and done.text == "ok"


async def test_persistent_500_raises_response_error() -> None:
    broken = ChatReply(status=502, error="bad gateway")
    async with FakeOpenAI(lambda body: broken) as peer, backend_for(peer, retries=1) as llm:
        with pytest.raises(LLMResponseError, match="HTTP 502"):
            await llm.complete(ask())
    assert peer.calls == 2


@pytest.mark.parametrize("status", [400, 422])
async def test_a_refused_request_is_not_retried_and_names_a_setting(status: int) -> None:
    bad = ChatReply(status=status, error="Invalid value for 'temperature': must be <= 2.")
    async with FakeOpenAI(lambda body: bad) as peer, backend_for(peer, retries=3) as llm:
        with pytest.raises(LLMConfigError) as info:
            await llm.complete(ask())
    assert peer.calls == 1
    assert info.value.setting == "llm.temperature"


async def test_400_is_not_retried() -> None:
    bad = ChatReply(status=400, error="This model's maximum context length is 8192 tokens.")
    async with FakeOpenAI(lambda body: bad) as peer, backend_for(peer, retries=3) as llm:
        with pytest.raises(LLMResponseError) as info:
            await llm.complete(ask())
    assert peer.calls == 1
    assert "maximum context length is 8192 tokens" in str(info.value)
    assert "HTTP 400" in str(info.value)


async def test_server_side_validation_reaches_the_caller() -> None:
    async with FakeOpenAI() as peer, backend_for(peer) as llm:
        with pytest.raises(LLMResponseError, match="messages"):
            await llm.complete(CompletionRequest(messages=[], model=MODEL))
    assert peer.calls == 1


async def test_wrong_api_key_is_401() -> None:
    async with FakeOpenAI(api_key="sk-right") as peer:
        async with backend_for(peer, api_key="sk-wrong") as llm:
            with pytest.raises(LLMResponseError, match="Incorrect API key") as info:
                await llm.complete(ask())
        async with backend_for(peer, api_key="sk-right") as llm:
            done = await llm.complete(ask())
    assert "HTTP 401" in str(info.value)
    assert peer.calls == 2 and done.text == "ok"


@pytest.mark.parametrize(
    "reply",
    [
        ChatReply(raw=b"<html>502 Bad Gateway</html>", headers={"Content-Type": "text/html"}),
        ChatReply(raw=b'{"choices": [', headers={"Content-Type": "application/json"}),
        ChatReply(raw=b'{"id": "x", "choices": []}', headers={"Content-Type": "application/json"}),
        ChatReply(raw=b'{"id": "x"}', headers={"Content-Type": "application/json"}),
    ],
    ids=["html", "truncated-json", "no-choices", "no-fields"],
)
async def test_malformed_200_body_is_a_response_error(reply: ChatReply) -> None:
    async with FakeOpenAI(lambda body: reply) as peer, backend_for(peer, retries=2) as llm:
        with pytest.raises(LLMResponseError):
            await llm.complete(ask())
    assert peer.calls == 1


async def test_null_content_is_a_response_error() -> None:
    body = (
        b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": '
        b'[{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", '
        b'"content": null, "refusal": "I cannot help with that."}}]}'
    )
    reply = ChatReply(raw=body, headers={"Content-Type": "application/json"})
    async with FakeOpenAI(lambda b: reply) as peer, backend_for(peer) as llm:
        with pytest.raises(LLMResponseError, match="cannot help"):
            await llm.complete(ask())


async def test_refused_connection_is_a_response_error() -> None:
    llm = OpenAIBackend(
        base_url=f"http://127.0.0.1:{closed_port()}/v1", retries=1, backoff_s=0.01, timeout_s=2
    )
    try:
        with pytest.raises(LLMResponseError, match="connection failed after 2 attempts"):
            await llm.complete(ask())
    finally:
        await llm.aclose()


# ----------------------------------------------------------------- accounting


async def test_token_accounting_comes_from_the_server() -> None:
    reply = ChatReply(content="yes", prompt_tokens=1234, completion_tokens=56, cached_tokens=1000)
    async with FakeOpenAI(lambda body: reply) as peer, backend_for(peer) as llm:
        done = await llm.complete(ask())
    assert (done.prompt_tokens, done.completion_tokens, done.cached_tokens) == (1234, 56, 1000)
    assert done.evaluated_prompt_tokens == 234
    assert done.usage_reported


async def test_default_usage_without_cache_details() -> None:
    async with FakeOpenAI(lambda body: "one two three") as peer, backend_for(peer) as llm:
        done = await llm.complete(ask())
    assert done.prompt_tokens == prompt_token_count(peer.requests[0])
    assert done.completion_tokens == 3
    assert done.cached_tokens is None and done.usage_reported


async def test_missing_usage_is_estimated() -> None:
    text = "x" * 41
    reply = ChatReply(content=text, usage=False)
    async with FakeOpenAI(lambda body: reply) as peer, backend_for(peer) as llm:
        done = await llm.complete(ask("y" * 100))
    assert not done.usage_reported
    prompt_chars = len("You check facts.") + 100
    assert done.prompt_tokens == -(-prompt_chars // 4)
    assert done.completion_tokens == 11
    assert done.cached_tokens is None


async def test_logprobs_are_mapped() -> None:
    entries = [("true", -0.1, {"true": -0.1, "false": -2.4}), (".", -0.01, {".": -0.01})]
    reply = ChatReply(content="true.", logprobs=entries)
    async with FakeOpenAI(lambda body: reply) as peer, backend_for(peer) as llm:
        done = await llm.complete(ask(top_logprobs=2))
    assert peer.requests[0]["logprobs"] is True and peer.requests[0]["top_logprobs"] == 2
    assert done.logprobs is not None
    assert [(t.token, t.logprob) for t in done.logprobs] == [("true", -0.1), (".", -0.01)]
    assert done.logprobs[0].top == {"true": -0.1, "false": -2.4}


async def test_synthesized_logprobs_and_logprobs_switched_off() -> None:
    async with FakeOpenAI(lambda body: "a b c") as peer:
        async with backend_for(peer) as llm:
            on = await llm.complete(ask(top_logprobs=1))
        async with backend_for(peer, logprobs=False) as llm:
            off = await llm.complete(ask(top_logprobs=1))
    assert on.logprobs is not None and [t.token for t in on.logprobs] == ["a", "b", "c"]
    assert off.logprobs is None and "logprobs" not in peer.requests[1]


# -------------------------------------------------------------- limits and timing


async def test_concurrency_is_bounded() -> None:
    async with FakeOpenAI(delay_s=0.2) as peer, backend_for(peer, concurrency=2) as llm:
        done = await asyncio.gather(*(llm.complete(ask(f"q{i}")) for i in range(6)))
    assert len(done) == 6 and peer.calls == 6
    assert peer.max_in_flight == 2


async def test_without_a_limit_calls_overlap() -> None:
    async with FakeOpenAI(delay_s=0.2) as peer, backend_for(peer, concurrency=8) as llm:
        await asyncio.gather(*(llm.complete(ask(f"q{i}")) for i in range(4)))
    assert peer.max_in_flight == 4


async def test_requests_per_second_spaces_calls() -> None:
    async with FakeOpenAI() as peer, backend_for(peer, requests_per_second=4.0) as llm:
        await asyncio.gather(*(llm.complete(ask()) for _ in range(6)))
    assert peer.calls == 6  # 4 at once, the next 2 once capacity refilled


async def test_a_call_past_the_rate_waits_for_capacity() -> None:
    """Counted at the server, not timed: at one call a minute, the first goes and the
    second is held back by the limiter (it would come a minute later), while a call of
    an unlimited backend, made after it, goes through."""
    async with (
        FakeOpenAI() as peer,
        backend_for(peer, requests_per_second=1 / 60) as llm,
        backend_for(peer) as unlimited,
    ):
        await llm.complete(ask("first"))
        second = asyncio.create_task(llm.complete(ask("second")))
        await asyncio.sleep(0)  # the second call is under way
        await unlimited.complete(ask("after"))  # a whole call's round trip
        assert peer.calls == 2 and not second.done()
        second.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await second
    assert peer.calls == 2


async def test_latency_covers_the_server_delay() -> None:
    async with FakeOpenAI(delay_s=0.25) as peer, backend_for(peer) as llm:
        done = await llm.complete(ask())
    assert 250 <= done.latency_ms < 5000


async def test_async_responder() -> None:
    seen: list[str] = []

    async def responder(body: dict[str, Any]) -> ChatReply:
        seen.append(body["messages"][-1]["content"])
        await asyncio.sleep(0)
        return ChatReply(content="async", finish_reason="length")

    async with FakeOpenAI(responder) as peer, backend_for(peer) as llm:
        done = await llm.complete(ask("hello"))
    assert seen == ["hello"] and done.text == "async" and done.finish_reason == "length"
