"""The engine's own logic, in the fast tier: what each depth asks, what the debate
shows, which quotes and claims are kept. The panel's script is answered in process at
``LLMBackend.complete`` (``tests.peers.fakes.panel_script``), so no model server runs; Stage 1 runs
for real (spaCy, MiniLM, the offline Wikipedia) with the fake Brave server on 127.0.0.1
for its web pages. ``tests/engine/test_engine.py`` holds the same engine against the fake
OpenAI server, for the protocol.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.engine.test_engine import HITS, POST, UNSETTLED, UNSETTLED_NODE
from tests.peers.fakes.panel_script import (
    PanelScript,
    ScriptedPanel,
    closest_sentence,
    last_user_text,
    word_logprobs,
)
from tests.peers.fixtures.engine_setup import EngineMaker, asked, script
from tests.peers.servers.openai_peer import ChatReply
from tests.peers.servers.search_peers import FakeBrave

from zofia_engine.config import EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.llm.scripted import scripted
from zofia_engine.post import ProgressEvent
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

pytest_plugins = ["tests.peers.fixtures.search_fixtures", "tests.peers.fixtures.model_fixtures"]


def _settings(
    panel: ScriptedPanel, sections: dict[str, dict[str, Any]] | None = None
) -> EngineSettings:
    """Settings whose roles all go to the scripted backend (``panel`` is taken for the
    same signature as ``test_engine``'s); ``sections`` overrides other sections."""
    sections = dict(sections or {})
    # The whole-claim reading unless a test asks for the part-by-part one (its own tests
    # are in test_parts_reading.py): these tests are about the steps around it.
    sections["agents"] = {"depth": "full", "reading": "stance", **sections.get("agents", {})}
    llm = {"backend": "openai", "openai": {"api_key": "sk-test", "model": "panel"}}
    return EngineSettings.model_validate({"llm": llm, **sections})


@pytest.fixture
def panel() -> ScriptedPanel:
    return ScriptedPanel(PanelScript())


@pytest_asyncio.fixture
async def make_engine(
    panel: ScriptedPanel,
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
    offline_wiki: OfflineWikipedia,
    brave_server: FakeBrave,
) -> AsyncIterator[Callable[..., Engine]]:
    """Engines on the shared models and the scripted backend, Brave answering HITS."""
    maker = EngineMaker(ner, encoder, offline_wiki, brave_server, HITS, scripted(panel))
    yield maker
    await maker.aclose()


_script, _asked = script, asked


# ------------------------------------------------------------------ evidence first (depth)
# Scripted paths, counted at the scripted backend: they prove which calls each depth makes
# for a given reading of the evidence, not that a model reads it that way.

ADAPTIVE = {"agents": {"depth": "adaptive"}}
CORE = "The mayor of Springfield banned bicycles."  # the default script's core claim


def sub_claims_refuted(body: dict[str, Any]) -> dict[str, Any]:
    """The core claim left unsettled, each sub-claim refuted by its closest sentence: a
    check whose evidence settles something, but not what decides the verdict."""
    if f"CLAIM: {CORE}" in last_user_text(body):
        return UNSETTLED
    return {
        "stance": "refutes",
        "sentences": [closest_sentence(body)],
        "reason": "The sentence contradicts the claim.",
    }


async def test_adaptive_with_nothing_settled_holds_one_round_and_rules_unproven(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    final = {"verdict": "true", "reason": "The evidence provided supports the claim."}
    script = _script(panel, readerreply=UNSETTLED, finalreply=final)
    report = await make_engine(_settings(panel, ADAPTIVE)).check(POST)
    assert report.depth == "adaptive"
    assert report.verdict == "unproven" and report.lean is not None
    assert report.lean.outcome == "true"
    # One round, both sides from the same material, then the judge's ruling; no tree, no
    # per-document stance calls, no round rulings.
    assert script.asked["debaterreply"] == 2 and script.asked["finalreply"] == 1
    for absent in ("judgereply", "nodereply", "decomposereply", "stancereply"):
        assert script.asked[absent] == 0, absent
    assert script.asked["readerreply"] == 3  # the three claims, over one shared list
    assert report.debate.rounds == 1 and report.debate.stopped_by == "no_evidence"
    # Nothing was settled, so the panel could not change the verdict: it was not asked.
    for absent in ("linguistreply", "domainreply", "expertreply"):
        assert script.asked[absent] == 0, absent
    assert not report.analyses.held and not report.analyses.linguist
    assert "supports" not in report.summary  # the overruled reasoning is not shown
    # The judge was told that nothing was settled.
    told = _asked(panel, "finalreply")[0]
    assert "no claim of the post was settled by the evidence" in last_user_text(told)
    assert "WHAT THE EVIDENCE SETTLED" not in last_user_text(told)
    readers = _asked(panel, "readerreply")
    assert len({json.dumps(b["messages"][:3]) for b in readers}) == 1  # one shared list


async def test_adaptive_with_a_settled_sub_claim_holds_the_full_debate(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    rulings = iter(["continue", "stop"])

    def judge(body: dict[str, Any]) -> dict[str, Any]:
        return {"verdict": "false", "next": next(rulings), "reason": "Refuted by the record."}

    script = _script(panel, judgereply=judge, readerreply=sub_claims_refuted)
    report = await make_engine(_settings(panel, ADAPTIVE)).check(POST)
    assert report.verdict == "false" and report.basis
    assert script.asked["judgereply"] == 2 and report.debate.rounds == 2
    # A settled claim can carry a verdict, so the panel is asked: five dimensions, the
    # domain and the expert's analysis.
    assert script.asked["linguistreply"] == 5 and script.asked["expertreply"] == 1
    assert report.analyses.held and len(report.analyses.linguist) == 5
    assert report.debate.stopped_by == "judge" and script.asked["stancereply"] == 0
    # Each web page's stance comes from the core claim's reading, with no call: the core
    # claim was not settled, so no page has one.
    assert not [e for e in report.evidence if e.stance is not None]
    assert report.claims[0].label == "not enough information"
    # The debate is grounded in the settled claims: their sentences are in its material.
    settled = next(c for c in report.claims if c.label == "refutes")
    pool = _asked(panel, "debaterreply")[0]["messages"][3]["content"]
    assert f"Shown by [{settled.quotes[0].evidence_id}]" in pool
    # The judge is reminded, right before it rules, which claim the evidence settled and
    # by which sentence, and may rule any outcome (the core claim is not settled).
    quote = settled.quotes[0]
    told = last_user_text(_asked(panel, "judgereply")[0])
    assert "WHAT THE EVIDENCE SETTLED" in told and f"[{quote.evidence_id}] contradicts" in told
    assert quote.text in told
    assert '"true", "false", "misleading" or "unproven"' in told


async def test_adaptive_with_the_core_claim_settled_holds_one_round_and_follows_it(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    """The default script refutes every claim, the core one too. The core claim decides:
    no panel, one round (both sides at once), and a judge held to the outcomes the
    refuted core claim allows ("false" alone: nothing was supported); a judge scripted
    to rule "true" anyway is overruled, and the lean keeps its ruling as against the
    evidence."""
    final = {"verdict": "true", "reason": "The post is accurate."}
    script = _script(panel, finalreply=final)
    report = await make_engine(_settings(panel, ADAPTIVE)).check(POST)
    assert report.claims[0].label == "refutes"
    assert report.verdict == "false" and "claim-0" in report.basis
    assert report.lean is not None and report.lean.against_evidence
    assert report.lean.outcome == "true"
    assert report.debate.rounds == 1 and report.debate.stopped_by == "settled"
    assert script.asked["debaterreply"] == 2 and script.asked["finalreply"] == 1
    for absent in ("judgereply", "linguistreply", "domainreply", "expertreply"):
        assert script.asked[absent] == 0, absent
    assert not report.analyses.held
    # Every claim was refuted, none supported: the judge's grammar allowed only "false"
    # ("misleading" needs evidence that goes both ways).
    body = _asked(panel, "finalreply")[0]
    verdict = body["response_format"]["json_schema"]["schema"]["properties"]["verdict"]
    assert verdict["enum"] == ["false"]
    assert 'you may rule only "false"' in last_user_text(body)
    # The card's summary is the reading's own words, not the overruled judge's.
    assert report.summary == report.claims[0].reason
    assert "accurate" not in report.summary


async def test_full_depth_holds_the_papers_debate_whatever_the_evidence(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    judge = {"verdict": "false", "next": "continue", "reason": "Unclear yet."}
    script = _script(panel, readerreply=UNSETTLED, nodereply=UNSETTLED_NODE, judgereply=judge)
    settings = _settings(panel, {"agents": {"depth": "full"}, "debate": {"max_rounds": 3}})
    report = await make_engine(settings).check(POST)
    assert report.verdict == "unproven" and report.depth == "full"
    assert report.debate.rounds == 3 and script.asked["judgereply"] == 2
    assert script.asked["stancereply"] == 2  # one per web page
    assert report.debate.stopped_by == ""  # the cap, with a forced ruling
    # The judge was told, every round, that nothing was settled.
    assert all(
        "no claim of the post was settled" in last_user_text(b) for b in _asked(panel, "judgereply")
    )


async def test_a_debate_that_repeats_itself_ends_and_shows_each_text_once(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    same = {"rebuttal": "", "argument": "The post names a real city and a real mayor.", "cites": []}
    judge = {"verdict": "false", "next": "continue", "reason": "Unclear yet."}
    linguist = {"analysis": "Sensational wording and vague sourcing throughout.", "lean": "fake"}
    copying = {"rebuttal": "", "argument": linguist["analysis"], "cites": []}
    answers = iter([same, copying, same, copying])
    script = _script(
        panel,
        debaterreply=lambda body: next(answers),
        judgereply=judge,
        linguistreply=linguist,
        readerreply=sub_claims_refuted,
    )
    report = await make_engine(_settings(panel, ADAPTIVE)).check(POST)
    debate = report.debate
    assert debate.stopped_by == "repetition" and debate.rounds == 2
    assert script.asked["debaterreply"] == 4 and script.asked["judgereply"] == 1
    shown = [t.argument for t in debate.turns if t.argument]
    assert shown == [same["argument"]]  # the con side copied the linguist; round 2 repeated
    assert [t.repeated for t in debate.turns] == [False, True, True, True]
    assert report.dropped.repeats == 3


@pytest.mark.parametrize(("style", "speaker"), [("zofia", "debaterreply"), ("radar", "radarreply")])
async def test_the_forced_ruling_at_the_cap_is_reported_as_its_round_once(
    panel: ScriptedPanel, make_engine: Callable[..., Engine], style: str, speaker: str
) -> None:
    judge = {"verdict": "false", "next": "continue", "reason": "Unclear yet."}
    final = {"verdict": "misleading", "reason": "Right in its facts, missing the context."}
    script = _script(panel, judgereply=judge, finalreply=final)
    sections: dict[str, dict[str, Any]]
    sections = {"agents": {"depth": "full"}, "debate": {"style": style, "max_rounds": 3}}
    events: list[ProgressEvent] = []
    report = await make_engine(_settings(panel, sections)).check(POST, on_progress=events.append)
    assert report.debate.forced and report.debate.rounds == 3 and script.asked[speaker] == 6
    assert script.asked["judgereply"] == 2 and script.asked["finalreply"] == 1
    rounds = [(e.round, e.detail) for e in events if e.kind == "round"]
    assert rounds == [(1, "continue"), (2, "continue"), (3, "misleading")]


async def test_the_opening_round_alone_is_reported_once(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    _script(panel, readerreply=UNSETTLED)
    events: list[ProgressEvent] = []
    report = await make_engine(_settings(panel, ADAPTIVE)).check(POST, on_progress=events.append)
    assert report.debate.stopped_by == "no_evidence"
    assert [(e.round, e.detail) for e in events if e.kind == "round"] == [(1, "false")]


async def test_the_settled_claims_are_worked_out_once_per_check(
    panel: ScriptedPanel, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    from zofia_engine import check_run
    from zofia_engine.agents import verdict

    calls: list[list[str]] = []
    grounded_claims = verdict.grounded_claims

    def counted(*args: Any, **kwargs: Any) -> list[str]:
        calls.append(grounded_claims(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(verdict, "grounded_claims", counted)
    monkeypatch.setattr(check_run, "grounded_claims", counted)
    judge = {"verdict": "false", "next": "stop", "reason": "Refuted by the record."}
    _script(panel, judgereply=judge, readerreply=sub_claims_refuted)
    report = await make_engine(_settings(panel, ADAPTIVE)).check(POST)
    # It decided the panel and the full debate, reminded the judge, and carries the verdict.
    assert report.verdict == "false" and report.analyses.held and report.debate.rounds >= 1
    assert len(calls) == 1 and report.basis == calls[0] and "claim-1" in report.basis


async def test_a_quote_in_neither_the_post_nor_the_evidence_is_dropped_and_counted(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    linguist = {
        "analysis": "It uses superlatives like 'newest' and 'best'. It says \"BREAKING\".",
        "lean": "fake",
    }
    _script(panel, linguistreply=linguist, readerreply=sub_claims_refuted)
    report = await make_engine(_settings(panel, ADAPTIVE)).check(POST)
    assert all(f.analysis == 'It says "BREAKING".' for f in report.analyses.linguist)
    assert report.dropped.quotes == 2 * 5  # two phrases, five dimensions


async def test_the_judges_summary_quotes_only_what_the_post_or_evidence_says(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    reason = "The post calls it 'the most' daring ban. The record contradicts it."
    judge = {"verdict": "false", "next": "stop", "reason": reason}
    _script(panel, judgereply=judge, readerreply=sub_claims_refuted)
    report = await make_engine(_settings(panel, ADAPTIVE)).check(POST)
    assert report.verdict == "false"
    assert report.summary == "The record contradicts it."
    assert report.dropped.quotes >= 1


async def test_a_stance_model_reads_the_claims_instead_of_the_llm(
    panel: ScriptedPanel,
    make_engine: Callable[..., Engine],
    tmp_path: Path,
    tiny_nli: Callable[..., Path],
) -> None:
    """A tiny NLI model built here, whose every answer is "contradiction" (p ≈ 0.94): it
    proves the wiring (no reading call reaches the LLM server, the model's stance is
    cited under the same rules), not the quality of any real NLI model."""
    from tests.peers.fakes.tiny_nli import NLI_LABELS

    path = tiny_nli(tmp_path / "nli", NLI_LABELS, bias=[-1.0, 0.0, 2.0])
    script = _script(panel)
    stance = {"backend": "nli", "model": str(path)}
    report = await make_engine(_settings(panel, {**ADAPTIVE, "stance": stance})).check(POST)
    assert script.asked["readerreply"] == script.asked["nodereply"] == 0
    core = report.claims[0]
    assert core.label == "refutes" and core.quotes
    # the model is named by what it did, not by its path: a path or a "nli:" name is
    # an address to the contacts gate, which would cut it out of the card
    assert core.reason.startswith("The stance model reads it: refutes with probability 0.8")
    shown = {q.text for c in report.claims for q in c.quotes}
    assert all(any(t in e.text for e in report.evidence) for t in shown)
    assert report.verdict == "false" and "claim-0" in report.basis


@pytest.mark.parametrize(("p_no", "label"), [(0.9, "refutes"), (0.5, "supports")])
async def test_a_likely_contradiction_refutes_a_claim_the_reading_supported(
    panel: ScriptedPanel, make_engine: Callable[..., Engine], p_no: float, label: str
) -> None:
    from tests.peers.fakes.panel_script import numbered_sentences

    from zofia_engine.agents.reading import PAIRS

    supports = {"sentences": [1], "reason": "Same subject.", "stance": "supports"}
    content = json.dumps({"same_subject": "yes", "both_true": "no"})
    odds = word_logprobs(content, both_true={"no": p_no, "yes": 1 - p_no})
    script = _script(
        panel,
        readerreply=lambda body: {**supports, "sentences": [closest_sentence(body)]},
        pairreply=ChatReply(content=content, logprobs=odds),
    )
    report = await make_engine(_settings(panel, ADAPTIVE)).check(POST)
    core = report.claims[0]
    assert core.label == label and core.quotes
    # One call per claim and close sentence, none asked twice: the core claim's closest
    # PAIRS["core"], each part's PAIRS["sub"], as the usage log names them.
    logged = [
        tuple(c.step.split(":")[2:])
        for c in report.usage.log
        if c.step.startswith("claims:contradiction:")
    ]
    kinds = {c.id: c.kind for c in report.claims}
    assert len(set(logged)) == len(logged) == script.asked["pairreply"]
    assert 1 <= sum(1 for claim, _ in logged if claim == core.id) <= PAIRS["core"]
    assert all(sum(1 for c, _ in logged if c == i) <= PAIRS[kinds[i]] for i, _ in logged)
    # Each pair is asked on its own: the sentence and the claim, with token probabilities.
    pairs = _asked(panel, "pairreply")
    assert all(b["top_logprobs"] == 5 and "CLAIM: " in last_user_text(b) for b in pairs)
    said = r"Sentence (\d+) and the claim cannot both be true \(p = 0\.90\)\."
    refuted = re.fullmatch(said, core.reason)
    assert bool(refuted) == (label == "refutes")
    # The refuting sentence is one the core claim was asked about, and the one it cites.
    read = _asked(panel, "readerreply")[0]
    shown = {str(n): (doc, text) for n, doc, text in numbered_sentences(read)}
    cites = [(q.evidence_id, q.text) for q in core.quotes]
    assert refuted is None or ((core.id, refuted[1]) in logged and cites == [shown[refuted[1]]])


# ------------------------------------------------------------------ triage overlap ("auto")


@pytest.mark.parametrize("local_models", [True, False])
async def test_auto_overlap_never_starts_a_gathering_that_would_reach_a_remote_source(
    panel: ScriptedPanel,
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
    offline_wiki: OfflineWikipedia,
    brave_server: FakeBrave,
    local_models: bool,
) -> None:
    # Every model route local or not, the web source here is Brave (a paid API): a
    # greeting's check asks the triage alone and searches nothing.
    reply = {"kind": "no_claim", "reason": "A greeting.", "signs": []}
    script_ = script(panel, triagereply=reply)
    maker = EngineMaker(
        ner, encoder, offline_wiki, brave_server, HITS, scripted(panel, local=local_models)
    )
    try:
        report = await maker(_settings(panel, ADAPTIVE)).check("Good morning, lovely Sunday!")
    finally:
        await maker.aclose()
    assert report.verdict == "no_claim"
    assert len(panel.requests) == 1 and script_.asked["triagereply"] == 1
    assert not brave_server.requests


def test_stage1_is_local_only_when_every_source_answers_from_this_machine(
    ner: NERBackend, encoder: SentenceTransformerEncoder, offline_wiki: OfflineWikipedia
) -> None:
    from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
    from zofia_engine.retrieval.web.brave import BraveSearch

    settings = EngineSettings()
    offline = EntityGuidedRetrieval(
        settings, ner=ner, encoder=encoder, search_backends=[], wikipedia=offline_wiki
    )
    assert offline.local
    brave = BraveSearch("token", base_url="http://127.0.0.1:9")
    remote = EntityGuidedRetrieval(
        settings, ner=ner, encoder=encoder, search_backends=[brave], wikipedia=offline_wiki
    )
    assert not remote.local
