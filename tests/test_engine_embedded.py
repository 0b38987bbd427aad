"""One check end to end on a real embedded model: SmolLM2-135M through llama.cpp.

A 135M model's verdicts mean little; what this test pins down is the plumbing
with a real model: every agent's call goes through the grammar-constrained
embedded backend, the shared prompt prefix is evaluated once and then reused
from llama.cpp's KV cache, and the report accounts for all of it.
"""

from __future__ import annotations

import pytest

from zofia_engine.config import EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.errors import ModelUnavailableError
from zofia_engine.llm.gguf import smollm2_135m_path
from zofia_engine.report import Report
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

pytest_plugins = ["peers.model_fixtures"]

pytestmark = pytest.mark.slow

POST = (
    "Scientists at NASA announced that the Moon is moving away from Earth by about "
    "3.8 centimetres every year. The measurement comes from lasers fired at mirrors "
    "left on the Moon by the Apollo astronauts."
)


async def test_a_check_on_the_embedded_model(
    ner: NERBackend, encoder: SentenceTransformerEncoder, offline_wiki: OfflineWikipedia
) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    try:
        model = smollm2_135m_path()
    except ModelUnavailableError as exc:
        pytest.skip(f"SmolLM2-135M is not installed: {exc}")
    settings = EngineSettings.model_validate(
        {
            "llm": {"embedded": {"model_path": str(model), "n_ctx": 16384}},
            "debate": {"max_rounds": 2},
            # The whole panel is what is pinned down here (the full depth asks it whatever
            # the evidence settles); triage has its own test below.
            "agents": {"depth": "full"},
            "triage": {"enabled": False},
        }
    )
    stage1 = EntityGuidedRetrieval(settings, ner=ner, encoder=encoder, wikipedia=offline_wiki)
    async with Engine(settings, retrieval=stage1) as engine:
        await engine.load()
        report = await engine.check(POST)

    assert Report.model_validate_json(report.model_dump_json()) == report
    log = report.usage.log
    assert log and all(c.backend.startswith("embedded:SmolLM2") for c in log)
    ok = [c for c in log if c.ok]
    assert len(ok) >= 10  # 5 linguist, 2 expert, extraction, and the debate at least
    assert all(c.usage_reported and c.prompt_tokens > 0 for c in ok)
    # The system and post messages are shared: after the first call, llama.cpp
    # reuses them from its KV cache instead of evaluating them again.
    assert all(c.cached_tokens is not None for c in ok)
    # Every call after the first starts with the same system and post messages, whatever
    # the model wrote in between, so each reuses at least that much from the cache.
    shared = min(c.prompt_tokens for c in ok)  # no prompt is shorter than the shared prefix
    # The log is in finishing order: one call read the shared prefix, every other reused it.
    assert all(cached >= shared // 2 for cached in sorted(c.cached_tokens or 0 for c in ok)[1:])
    assert report.debate.rounds >= 1 and report.debate.turns
    # Offline: no web backend, and the report says so.
    assert any("no open-web evidence" in note for note in report.degraded)
    # Without a web page no claim can be settled by a quote, so whichever way SmolLM2
    # ruled, the verdict is unproven (or undetermined if the judge failed), and a
    # true / false / misleading ruling is kept as the panel's lean.
    decision = report.debate.rulings[-1].decision
    assert report.verdict == ("undetermined" if decision is None else "unproven")
    assert report.basis == []
    if decision in ("true", "false", "misleading"):
        assert report.lean is not None and report.lean.outcome == decision
        # The judge's token probabilities come from llama.cpp's logits.
        assert report.lean.probability is not None and 0.0 <= report.lean.probability <= 1.0
    elif decision == "unproven":
        assert report.confidence.value is not None, report.confidence.basis
    if report.verdict != "undetermined":
        assert report.summary
