"""Ablations through the evaluation harness: each switch removes the calls it names,
counted at the fake OpenAI and Brave servers; and the item's date is the search cutoff.

Real Stage 1 models (spaCy, MiniLM, offline Wikipedia), the fake Brave server
for the open web.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from tests.peers.fakes.panel_script import SCHEMAS, PanelScript
from tests.peers.servers.openai_peer import FakeOpenAI
from tests.peers.servers.search_peers import BRAVE_TOKEN, FakeBrave, brave_body, brave_result

from zofia_engine.config import EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.evaluation import LABEL_MAPPINGS, EvalItem, ResultLog, RunHeader, evaluate
from zofia_engine.post import ABLATIONS, Ablation, Post
from zofia_engine.records.stage1 import WikiCandidate
from zofia_engine.report import Report
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.web.brave import BraveSearch
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

pytest_plugins = ["tests.peers.fixtures.search_fixtures", "tests.peers.fixtures.model_fixtures"]

pytestmark = pytest.mark.slow

ITEM = EvalItem(
    "springfield",
    "BREAKING: The mayor of Springfield, Illinois has banned bicycles from every street "
    "in the city! Mayor Misty Buscher signed the law in March and cyclists now face a "
    "500 dollar fine. Share before they delete this!!!",
    "fake",
    "fake",
    published=dt.date(2016, 11, 9),
)
HITS = [
    brave_result(
        "https://factcheck.example.org/springfield-bikes",
        "No, Springfield did not ban bicycles",
        "Claims that Springfield banned bicycles are false. "
        "The mayor's office said cycling remains legal on all city streets.",
    )
]

# What each switch of the paper's Table 2 must silence (reply schemas at the LLM server).
# At the full depth claims are judged as a tree's nodes against the sentences of every
# source; stances are of web pages toward the extracted core claim.
_WEB_ONLY = {"stancereply"}
_READING = {"nodereply", "stancereply"}
SILENCED: dict[str, set[str]] = {
    "full": set(),
    "no-wikipedia": set(),
    "no-web": _WEB_ONLY,
    "no-retrieval": _READING,
    "no-linguist": {"linguistreply"},
    "no-expert": {"domainreply", "expertreply"},
    "no-linguist-expert": {"linguistreply", "domainreply", "expertreply"},
    "no-claims": {"extractorreply", *_READING},
    "no-debate": {"debaterreply", "judgereply"},
}
# Every agent's reply schema that the default path asks: "finalreply" only follows a
# debate that reached its cap, RADAR's debaters and the flat verifier are not the
# default, and the scripted nodes are reliable enough never to be split. At this depth
# the tree of claims reads each claim, so the part reader's blanks and its yes/no are
# not asked, nor a planned search (the tree settles the core claim), nor the answer
# reading's findings question.
PANEL = set(SCHEMAS) - {
    "blanksreply",
    "saidreply",
    "planreply",
    "onlyllmreply",  # the only-LLM baseline of bench/settle.py, never a check's
    "findingsreply",  # the answer reading, off by default and with no fact-check here
    "finalreply",
    "radarreply",
    "readerreply",
    "pairreply",
    "decomposereply",
    "visionreply",
}


@pytest_asyncio.fixture
async def make_engine(
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
    offline_wiki: OfflineWikipedia,
    brave_server: FakeBrave,
) -> AsyncIterator[Callable[[FakeOpenAI], Engine]]:
    brave_server.respond(brave_body(HITS))
    made: list[Engine] = []

    def make(peer: FakeOpenAI) -> Engine:
        settings = EngineSettings.model_validate(
            {
                "llm": {
                    "backend": "openai",
                    "timeout_s": 5.0,
                    "retries": 1,
                    "openai": {"base_url": peer.base_url, "api_key": "sk-test", "model": "p"},
                },
                "agents": {"depth": "full"},  # the paper's whole run, as Table 2 ablates it
            }
        )
        brave = BraveSearch(BRAVE_TOKEN, base_url=brave_server.base_url, requests_per_second=1000.0)
        stage1 = EntityGuidedRetrieval(
            settings, ner=ner, encoder=encoder, search_backends=[brave], wikipedia=offline_wiki
        )
        engine = Engine(settings, retrieval=stage1)
        made.append(engine)
        return engine

    yield make
    for engine in made:
        await engine.aclose()


def test_every_table_2_switch_is_covered() -> None:
    assert set(SILENCED) == set(ABLATIONS)


@pytest.mark.parametrize("name", list(ABLATIONS))
async def test_ablation_switches_remove_the_calls_they_name(
    make_engine: Callable[[FakeOpenAI], Engine],
    brave_server: FakeBrave,
    offline_wiki: OfflineWikipedia,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    name: str,
) -> None:
    wiki_lookups: list[str] = []
    lookup = offline_wiki.candidates

    async def counted(keyword: str, limit: int) -> list[WikiCandidate]:
        wiki_lookups.append(keyword)
        return await lookup(keyword, limit)

    monkeypatch.setattr(offline_wiki, "candidates", counted)
    script = PanelScript()
    async with FakeOpenAI(script, api_key="sk-test") as peer:
        engine = make_engine(peer)
        header = RunHeader(
            run_key=name,
            dataset="t.jsonl",
            mode="full",
            ablation=name,
            labels="binary",
            models=engine.llm.describe(),
            limit=None,
            seed=0,
            sample=[ITEM.id],
            started="2024-01-01T00:00:00+00:00",
        )
        reports: list[Report] = []

        async def checker(post: Post) -> Report:
            report = await engine.check(post, ablation=Ablation.named(name))
            reports.append(report)
            return report

        log = ResultLog(tmp_path / "out.jsonl")
        records = await evaluate([ITEM], checker, log, header, LABEL_MAPPINGS["binary"])

    record = records[ITEM.id]
    # Without evidence sentences about the claims nothing is settled: the engine abstains
    # (unproven), scored as not covered; the paper's rule (require_evidence off) would
    # say fake. Without the web, Wikipedia's sentences are read, but none is about the ban.
    grounded = name not in ("no-web", "no-retrieval", "no-claims")
    assert not record.error and record.predicted == ("fake" if grounded else None)
    assert record.verdict == ("false" if grounded else "unproven")
    assert record.ablation == name
    assert record.llm_calls == peer.calls  # the record's count is the server's count
    assert sum(script.asked.values()) == peer.calls
    silenced = SILENCED[name]
    assert {s for s in PANEL if script.asked[s] == 0} == silenced
    assert script.asked["finalreply"] == (1 if name == "no-debate" else 0)
    searched = bool(brave_server.requests)
    assert searched == (name not in ("no-web", "no-retrieval"))
    if searched:  # the item's publication date cuts the search off the day before
        freshness = {r.params.get("freshness") for r in brave_server.requests}
        assert freshness == {"1970-01-01to2016-11-08"}
    assert bool(wiki_lookups) == (name not in ("no-wikipedia", "no-retrieval"))
    sources = {e.source for e in reports[0].evidence}
    assert ("web" in sources) == searched
    if not wiki_lookups:
        assert "wikipedia" not in sources
