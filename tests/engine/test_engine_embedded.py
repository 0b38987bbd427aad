"""One check end to end on a real embedded model: SmolLM2-135M through llama.cpp.

A 135M model's verdicts mean little; what this test pins down is the plumbing
with a real model: every agent's call goes through the grammar-constrained
embedded backend, the shared prompt prefix is evaluated once and then reused
from llama.cpp's KV cache, and the report accounts for all of it; and whatever the
model rules, the verdict keeps the evidence rule.
"""

from __future__ import annotations

import pytest

from zofia_engine.agents.verdict import grounded_claims
from zofia_engine.config import EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.errors import ModelUnavailableError
from zofia_engine.llm.gguf import smollm2_135m_path
from zofia_engine.report import Report
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

pytest_plugins = ["tests.peers.fixtures.model_fixtures"]

pytestmark = pytest.mark.slow

# The claim labels that can carry each outcome the evidence must back (zofia_engine/
# agents/verdict.py): "misleading" may be right in some facts and wrong in others.
CARRIES = {"true": {"supports"}, "false": {"refutes"}, "misleading": {"supports", "refutes"}}

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
            # the evidence settles); triage has its own tests (tests/engine/test_engine.py).
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
    # What SmolLM2 rules is its own business; the evidence rule is the engine's. A true,
    # false or misleading verdict rests on claims the evidence settled its way, each
    # quoting a sentence of an evidence item in the report; any other ruling is unproven
    # (undetermined if the judge failed) with no basis, the ruling kept as the lean.
    decision = report.debate.rulings[-1].decision
    evidence = {e.id: " ".join(e.text.split()) for e in report.evidence}
    claims = {c.id: c for c in report.claims}
    settled = set(grounded_claims(report.claims, report.evidence))
    if report.verdict in CARRIES:
        assert report.verdict == decision and report.basis
        assert all(claims[i].label in CARRIES[report.verdict] for i in report.basis)
        assert set(report.basis) <= settled  # offline: no published fact-check, no image
        for quote in (q for i in report.basis for q in claims[i].quotes):
            assert quote.text.removesuffix("…") in evidence[quote.evidence_id], quote
        assert report.lean is None
    else:
        assert report.verdict == ("undetermined" if decision is None else "unproven")
        assert report.basis == []
        # A true, false or misleading ruling was overruled: no settled claim carried it.
        if decision in CARRIES:
            assert not any(claims[i].label in CARRIES[decision] for i in settled)
            assert report.lean is not None and report.lean.outcome == decision
            # The judge's token probabilities come from llama.cpp's logits.
            assert report.lean.probability is not None and 0.0 <= report.lean.probability <= 1.0
        else:
            assert report.lean is None
    if report.verdict != "undetermined":
        assert report.summary
