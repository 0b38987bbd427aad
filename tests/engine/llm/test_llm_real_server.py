"""Our OpenAI backend against a real OpenAI-compatible server: llama-cpp-python's own,
serving SmolLM2-135M on 127.0.0.1.

The aiohttp fake lets a test choose what the model says; this server shows that we
speak the protocol the way a real one takes it: it refuses ``json_schema`` response
formats (HTTP 500 naming the field) and takes a schema inside ``json_object``, and it
sends usage and log-probabilities in its own fields. What SmolLM2 says is not asserted.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.peers.servers.llama_server import MODEL_ALIAS, llama_server

from zofia_engine.check_run import CheckRun
from zofia_engine.config import EngineSettings
from zofia_engine.diagnostics import diagnose_engine
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.errors import LLMConfigError, ModelUnavailableError
from zofia_engine.llm.base import ChatMessage, CompletionRequest
from zofia_engine.llm.gguf import smollm2_135m_path
from zofia_engine.llm.openai_backend import OpenAIBackend
from zofia_engine.post import Ablation, Post
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

pytest_plugins = ["tests.peers.fixtures.model_fixtures"]

pytestmark = pytest.mark.slow

SCHEMA = {
    "type": "object",
    "properties": {"label": {"enum": ["real", "fake"]}, "reason": {"type": "string"}},
    "required": ["label", "reason"],
    "additionalProperties": False,
}
POST = (
    "Scientists at NASA announced that the Moon is moving away from Earth by about "
    "3.8 centimetres every year, measured with lasers fired at mirrors on the Moon."
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")
    try:
        model = smollm2_135m_path()
    except ModelUnavailableError as exc:
        pytest.skip(f"SmolLM2-135M is not installed: {exc}")
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with llama_server(model, log, n_ctx=8192) as root:
        yield root


def _ask(**kw: object) -> CompletionRequest:
    messages = (
        ChatMessage("system", "You check facts and answer in JSON."),
        ChatMessage("user", "Is the Moon made of cheese? Answer with a label and a reason."),
    )
    return CompletionRequest(messages=messages, model=MODEL_ALIAS, max_tokens=48, **kw)  # type: ignore[arg-type]


async def test_auto_learns_what_the_server_takes(server: str) -> None:
    backend = OpenAIBackend(base_url=server, api_key="local", retries=0, timeout_s=60)
    try:
        first = await backend.complete(_ask(schema=SCHEMA, top_logprobs=2))
        second = await backend.complete(_ask(schema=SCHEMA))
        models = await backend.list_models()
    finally:
        await backend.aclose()
    assert backend.mode == "json_object_schema"
    assert MODEL_ALIAS in models
    for reply in (first, second):
        assert reply.usage_reported and reply.prompt_tokens > 10 and reply.completion_tokens > 0
    # The logprobs are the server's own: one entry per generated token it reports.
    assert first.logprobs is not None and len(first.logprobs) == first.completion_tokens
    # This server lists the chosen token among the alternatives even outside the top 2.
    assert all(t.logprob <= 0 and t.token in t.top and len(t.top) <= 3 for t in first.logprobs)


async def test_json_schema_on_this_server_is_a_configuration_error(server: str) -> None:
    backend = OpenAIBackend(
        base_url=server, api_key="local", structured_output="json_schema", retries=3
    )
    try:
        with pytest.raises(LLMConfigError) as info:
            await backend.complete(_ask(schema=SCHEMA))
    finally:
        await backend.aclose()
    assert info.value.setting == "llm.openai.structured_output"
    assert "response_format" in str(info.value)


def _settings(server: str, triage: bool = False) -> EngineSettings:
    """The whole panel through the server: the full depth asks every role whatever the
    evidence settles (the adaptive depth skips the panel when nothing is settled)."""
    return EngineSettings.model_validate(
        {
            "agents": {"depth": "full"},
            "llm": {
                "backend": "openai",
                "timeout_s": 120.0,
                "openai": {"base_url": server, "api_key": "local", "model": MODEL_ALIAS},
            },
            "debate": {"max_rounds": 1},
            "triage": {"enabled": triage},
        }
    )


async def test_a_whole_check_through_the_server(
    server: str,
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
    offline_wiki: OfflineWikipedia,
) -> None:
    settings = _settings(server)
    stage1 = EntityGuidedRetrieval(settings, ner=ner, encoder=encoder, wikipedia=offline_wiki)
    async with Engine(settings, retrieval=stage1) as engine:
        report = await engine.check(POST)
    log = report.usage.log
    assert len(log) >= 10
    # No call was refused, and every count is the server's.
    assert all(call.ok for call in log), [call.error for call in log if not call.ok]
    assert all(call.usage_reported and call.prompt_tokens > 0 for call in log)
    assert not any("schema" in note for note in report.degraded), report.degraded
    # The judge's probabilities came from the server's logprobs.
    final = report.debate.rulings[-1]
    if final.status == "ok":
        assert final.probabilities is not None and final.label_confidence is not None


async def test_triage_through_the_server(server: str) -> None:
    # Whatever kind the 135M model picks, the call fits the server's JSON mode.
    settings = _settings(server, triage=True)
    async with Engine(settings) as engine:
        post = Post(text="Good morning everyone! Have a lovely Sunday.")
        run = CheckRun(settings, engine.retrieval, engine.llm.session(), post, Ablation(), None)
        found = await run.triage()
    assert found.status == "ok", found.error
    assert found.kind in ("claim", "no_claim", "satire", "scam")
    assert [c.step for c in run.session.calls] == ["triage"]
    assert run.session.calls[0].ok


async def test_doctor_reports_the_mode_it_found(server: str) -> None:
    findings = await diagnose_engine(_settings(server))
    [llm] = [f for f in findings if f.part.startswith("LLM")]
    assert llm.status == "ok", llm.summary
    assert "structured output: json_object_schema" in llm.summary
    assert "logprobs: yes" in llm.summary
    assert {f.part for f in findings} >= {"NER spacy", "encoder", "web search", "wikipedia:offline"}
