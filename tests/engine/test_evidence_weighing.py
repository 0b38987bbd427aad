"""Evidence you can weigh, end to end: published fact-checks (the fake Google Fact Check
Tools API on 127.0.0.1), each document's stance and source, and AgentFact's reverse
rule, on the real Stage-1 models with the fake OpenAI server scripting the panel.

The panel is scripted: these tests prove what the engine does with what the models
say (which evidence carries a verdict), not what a model would say.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio

from tests.peers.fakes.panel_script import PanelScript, numbered_sentences, schema_name
from tests.peers.servers.factcheck_peer import (
    GOOGLE_KEY,
    FakeFactCheck,
    api_not_enabled,
    claim_entry,
    claim_review,
)
from tests.peers.servers.openai_peer import FakeOpenAI
from tests.peers.servers.search_peers import BRAVE_TOKEN, FakeBrave, brave_body, brave_result

from bots.discord.render import verdict_embed
from bots.render.card import verdict_card
from bots.service.records import Outcome
from bots.telegram.render import card_html
from zofia_engine.config import EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.report import Report
from zofia_engine.retrieval.factcheck.google import GoogleFactCheck
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.web.brave import BraveSearch
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

pytest_plugins = ["tests.peers.fixtures.search_fixtures", "tests.peers.fixtures.model_fixtures"]
pytestmark = pytest.mark.slow

POST = (
    "BREAKING: The mayor of Springfield, Illinois has banned bicycles from every street "
    "in the city! Mayor Misty Buscher signed the law in March and cyclists now face a "
    "500 dollar fine. Share before they delete this!!!"
)
REVIEWED = claim_entry(
    "The mayor of Springfield, Illinois banned bicycles from every street in the city.",
    claim_review(
        "PolitiFact",
        "politifact.com",
        "https://www.politifact.com/factchecks/2024/mar/02/springfield-bicycle-ban/",
        "False",
        title="No, Springfield did not ban bicycles",
        reviewed=dt.date(2024, 3, 2),
    ),
    claimant="Facebook posts",
)
UNRELATED = claim_entry(
    "Springfield's water supply is contaminated with lead.",
    claim_review(
        "Snopes", "snopes.com", "https://www.snopes.com/fact-check/springfield-water/", "False"
    ),
)
TRUSTED = brave_result(
    "https://www.reuters.com/world/us/springfield-cycling",
    "Springfield keeps its bike lanes",
    "The Springfield city council passed no ordinance on bicycles in March.",
)
POISON = brave_result(
    "https://www.infowars.com/springfield-bicycle-ban-exposed",
    "EXPOSED: Springfield bicycle ban they don't want you to know about",
    "Springfield mayor banned bicycles from every street, Springfield bicycles banned, "
    "the Springfield bicycle ban is real and cyclists face a 500 dollar fine.",
)


def _quote_from(marker: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A reader (or tree node) that supports the claim with the numbered sentence of a web
    page containing ``marker``; no such sentence: neither."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        for number, document, text in numbered_sentences(body):
            if document.startswith("web-") and marker in text:
                return {
                    "sentences": [number],
                    "reason": "The page says so.",
                    "stance": "supports",
                    "veracity": 0.9,
                    "reliability": 0.9,
                }
        return {
            "sentences": [],
            "reason": "Nothing on it.",
            "stance": "neither",
            "veracity": 0.5,
            "reliability": 0.8,
        }

    return reply


def _node_to_reader(reply: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    def reader(body: dict[str, Any]) -> dict[str, Any]:
        out = reply(body)
        return {k: out[k] for k in ("sentences", "reason", "stance")}

    return reader


TRUE_JUDGE = {"verdict": "true", "next": "stop", "reason": "The page confirms the ban."}


@pytest_asyncio.fixture
async def factchecks() -> AsyncIterator[FakeFactCheck]:
    async with FakeFactCheck(claims=(REVIEWED, UNRELATED)) as peer:
        yield peer


@pytest_asyncio.fixture
async def panel() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI(PanelScript(), api_key="sk-test") as peer:
        yield peer


@pytest_asyncio.fixture
async def check(
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
    offline_wiki: OfflineWikipedia,
    brave_server: FakeBrave,
    factchecks: FakeFactCheck,
    panel: FakeOpenAI,
) -> AsyncIterator[Callable[..., Any]]:
    """``await check(hits, **sections)``: one check of POST with Brave answering ``hits``."""
    engines: list[Engine] = []

    async def run(hits: list[dict[str, Any]], **sections: Any) -> Report:
        brave_server.respond(brave_body(hits))
        settings = EngineSettings.model_validate(
            {
                "llm": {
                    "backend": "openai",
                    "retries": 0,
                    "openai": {"base_url": panel.base_url, "api_key": "sk-test"},
                },
                # The papers' whole run (stance calls, the tree) unless a test says.
                "agents": {"depth": "full"},
                **sections,
            }
        )
        brave = BraveSearch(BRAVE_TOKEN, base_url=brave_server.base_url, requests_per_second=1e3)
        google = GoogleFactCheck(GOOGLE_KEY, base_url=factchecks.base_url, retries=0)
        stage1 = EntityGuidedRetrieval(
            settings,
            ner=ner,
            encoder=encoder,
            search_backends=[brave],
            wikipedia=offline_wiki,
            factcheck_backends=[google],
        )
        engine = Engine(settings, retrieval=stage1)
        engines.append(engine)
        return await engine.check(POST)

    yield run
    for engine in engines:
        await engine.aclose()


async def test_a_published_fact_check_is_evidence_and_the_cards_first_line(
    check: Callable[..., Any], factchecks: FakeFactCheck, panel: FakeOpenAI
) -> None:
    report = await check([TRUSTED])
    [fc] = [e for e in report.evidence if e.source == "factcheck"]
    assert report.evidence[0] is not None and report.evidence[0].id == fc.id == "fc-1"
    assert (fc.publisher, fc.rating, fc.published) == ("PolitiFact", "False", dt.date(2024, 3, 2))
    assert fc.credibility is not None and fc.credibility.label == "fact-checker"
    assert "fc-1" in report.basis and report.verdict == "false"
    # Looked up twice: the post's first sentence at once, then the extracted core claim.
    queries = [r.query["query"] for r in factchecks.requests]
    assert len(queries) == 2 and queries[0].startswith("BREAKING: The mayor of Springfield")
    assert "The mayor of Springfield banned bicycles." in queries
    # The unrelated review of a Springfield claim was found by words, not kept.
    assert not any("water" in e.text for e in report.evidence)
    # The panel saw it first, with its rating.
    debater = next(b for b in panel.requests if schema_name(b) == "debaterreply")
    evidence = debater["messages"][2]["content"]
    assert evidence.index("[fc-1] Published fact-check") < evidence.index("[web-1]")
    assert "rated 'False' by PolitiFact" in evidence

    card = verdict_card(Outcome("abcDEF123_-xyz45", report))
    line = "Already checked by PolitiFact (2024-03-02): False"
    assert [link.title for link in card.checked_by] == [line]
    assert line in card_html(card)
    fields = {f.name: f.value or "" for f in verdict_embed(card).fields}
    assert line in fields["Published fact-checks"].replace("\\", "")


async def test_no_match_and_a_refused_key_leave_the_check_going(
    check: Callable[..., Any], factchecks: FakeFactCheck
) -> None:
    factchecks.claims = [UNRELATED]
    report = await check([TRUSTED])
    assert not [e for e in report.evidence if e.source == "factcheck"]
    assert not any("factcheck" in note for note in report.degraded)

    factchecks.fail(api_not_enabled(), times=2)
    report = await check([TRUSTED])
    assert report.verdict == "false"  # the web evidence still carries it
    [note] = [n for n in report.degraded if n.startswith("factcheck:google failed")]
    assert GOOGLE_KEY not in note and GOOGLE_KEY not in json.dumps(report.model_dump(mode="json"))


async def test_support_from_a_low_quality_site_carries_no_true_verdict(
    check: Callable[..., Any], panel: FakeOpenAI, factchecks: FakeFactCheck
) -> None:
    factchecks.claims = []  # no published fact-check: the web page is all there is
    gullible = _quote_from("Springfield bicycle ban is real")
    panel.responder = PanelScript(
        nodereply=gullible,
        readerreply=_node_to_reader(gullible),
        stancereply={"stance": "supports", "sentence": ""},
        judgereply=TRUE_JUDGE,
    )
    report = await check([POISON])
    [page] = [e for e in report.evidence if e.source == "web"]
    assert page.credibility is not None and page.credibility.label == "low"
    assert page.stance is not None and page.stance.label == "supports" and page.reversed
    assert any(q.evidence_id == page.id for c in report.claims for q in c.quotes)
    # The judge is told what the page is worth, beside its text.
    judge = next(b for b in panel.requests if schema_name(b) == "judgereply")
    seen = " ".join(str(m["content"]) for m in judge["messages"])
    assert "infowars.com · low quality" in seen
    assert "support from this source counts against the post" in seen
    # The judge said true, on the poisoned page alone: not a verdict.
    assert report.verdict == "unproven" and report.basis == []
    assert report.lean is not None and report.lean.outcome == "true"

    # Without the credibility weighting, the same page would carry "true".
    off = await check([POISON], evidence={"credibility": False})
    assert off.verdict == "true" and off.basis


async def test_the_flat_claims_switch_gives_zofias_calls_exactly(
    check: Callable[..., Any], panel: FakeOpenAI
) -> None:
    """Tree off: the extractor's claims each verified once, as ZoFia does; on: the same
    three claims judged as the tree's nodes."""
    # Every cited sentence counts here: the switch is under test, not the citation guard.
    every = {"depth": "full", "min_citation_similarity": 0.0}
    flat = await check([TRUSTED], tree={"enabled": False}, agents=every)
    steps = [c.step for c in flat.usage.log if c.step.startswith("claims:")]
    # Besides ZoFia's calls (one extraction, one reading a claim), the contradiction check
    # asks one call per sentence: the core claim's two closest, each part's closest. The
    # fine (claim-2) is read part by part: no sentence states an amount, so no reader.
    assert sorted(steps) == [
        "claims:contradiction:claim-0:1",
        "claims:contradiction:claim-0:7",
        "claims:contradiction:claim-1:1",
        "claims:extract",
        "claims:read:claim-0",
        "claims:read:claim-1",
    ]
    assert flat.claims[2].read_by == "parts"
    assert flat.tree is None and all(c.parent is None and c.depth == 0 for c in flat.claims)
    readers = [b for b in panel.requests if schema_name(b) == "readerreply"]
    assert all(b["messages"][2]["content"].startswith("EVIDENCE") for b in readers)

    tree = await check([TRUSTED], agents=every)
    steps = [c.step for c in tree.usage.log if c.step.startswith("claims:")]
    assert sorted(steps) == [
        "claims:extract",
        "claims:node:claim-0",
        "claims:node:claim-1",
        "claims:node:claim-2",
    ]
    assert tree.tree is not None
    # The tree's result reaches the judge as an analysis it can cite.
    judge = [b for b in panel.requests if schema_name(b) == "judgereply"][-1]
    seen = " ".join(str(m["content"]) for m in judge["messages"])
    assert f"from {tree.tree.evaluations} judgements of it and its parts" in seen


async def test_an_unreliable_root_is_split_into_weighted_parts_within_the_caps(
    check: Callable[..., Any], panel: FakeOpenAI
) -> None:
    def unsure(body: dict[str, Any]) -> dict[str, Any]:
        return {
            "sentences": [],
            "reason": "Vague.",
            "stance": "neither",
            "veracity": 0.5,
            "reliability": 0.3,  # below 0.7: split
        }

    script = PanelScript(nodereply=unsure)
    panel.responder = script
    report = await check([TRUSTED])
    assert report.tree is not None and report.tree.stopped_by == "exhausted"
    assert report.tree.evaluations == len(report.claims)
    # A node with no passage at all is judged without a call, as the flat verifier does.
    assert script.asked["nodereply"] == sum(1 for c in report.claims if c.context)
    children: dict[str | None, list[Any]] = {}
    for claim in report.claims:
        children.setdefault(claim.parent, []).append(claim)
    # Every unreliable part with passages to judge it on, above the last level, was split
    # into the scripted two, weighted 0.6 and 0.4; parts with no passage were not.
    for claim in report.claims:
        splittable = claim.depth == 1 and bool(claim.context)
        assert (claim.id in children) == (splittable or claim.depth == 0), claim.id
        if splittable:
            assert [c.importance for c in children[claim.id]] == pytest.approx([0.6, 0.4])
            assert [c.dimension for c in children[claim.id]] == ["event", "quantity"]
    assert script.asked["decomposereply"] == len(children) - 2  # beside None and the root
    assert script.asked["decomposereply"] >= 1
    assert max(c.depth for c in report.claims) == 2  # depth 3: levels 0, 1 and 2

    panel.responder = script = PanelScript(nodereply=unsure)
    capped = await check([TRUSTED], tree={"max_evaluations": 6})
    assert capped.tree is not None
    assert (capped.tree.evaluations, capped.tree.stopped_by) == (6, "budget")
    assert capped.tree.evaluations == len(capped.claims) - 1  # one part left unjudged
