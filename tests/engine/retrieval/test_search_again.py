"""Searching again for a core claim the first search left unsettled (issue 39).

Stage 1 runs for real (spaCy, MiniLM, the offline Wikipedia) with the fake Brave server
on 127.0.0.1 answering by query; the panel is scripted at the backend (the planner's
queries, a reader that refutes only on the planted page's sentence). These tests prove
the loop's logic (what is searched, when it stops, what the report records), not what a
model plans: ``bench/quality_corpus.py`` measures that on the packaged model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.engine.test_engine import UNSETTLED
from tests.peers.fakes.panel_script import ScriptedPanel, numbered_sentences
from tests.peers.fixtures.engine_setup import EngineMaker, script
from tests.peers.servers.search_peers import FakeBrave, brave_body, brave_result

from zofia_engine.config import EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.engine import Engine
from zofia_engine.evaluation import LABEL_MAPPINGS, EvalItem, ResultLog, RunHeader, evaluate
from zofia_engine.llm.scripted import scripted
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

pytest_plugins = ["tests.peers.fixtures.search_fixtures", "tests.peers.fixtures.model_fixtures"]

POST = "Elvira Quince was the first mayor of Dunmore Falls, a town in Vermont."
CLAIM = {"core_claim": {"sentence": 1, "claim": POST}, "sub_claims": []}
MARKER = "The records of Dunmore Falls list Harold Pike as its first mayor, in 1871."
PAGE = brave_result("https://dunmore.example.org/history", "Town history", MARKER)


def _settings(**agents: Any) -> EngineSettings:
    llm = {"backend": "openai", "openai": {"api_key": "sk-test", "model": "panel"}}
    sections = {"depth": "adaptive", "reading": "stance", **agents}
    return EngineSettings.model_validate({"llm": llm, "agents": sections})


def _reader(body: dict[str, Any]) -> dict[str, Any]:
    """Refutes the claim with the planted page's sentence when it is shown, else says
    nothing is settled."""
    for number, _, text in numbered_sentences(body):
        if "Harold Pike" in text:
            return {"stance": "refutes", "sentences": [number], "reason": "Another mayor."}
    return UNSETTLED


def _planner(*rounds: list[str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    answers: Iterator[list[str]] = iter(rounds)
    return lambda body: {"queries": next(answers, [])}


@pytest.fixture
def panel() -> ScriptedPanel:
    return ScriptedPanel(lambda body: "{}")


@pytest_asyncio.fixture
async def engine(
    panel: ScriptedPanel,
    ner: NERBackend,
    encoder: SentenceTransformerEncoder,
    offline_wiki: OfflineWikipedia,
    brave_server: FakeBrave,
) -> AsyncIterator[Callable[..., Engine]]:
    maker = EngineMaker(ner, encoder, offline_wiki, brave_server, [], scripted(panel))
    brave_server.respond_when(lambda q: "town records" in q.get("q", ""), brave_body([PAGE]))
    yield maker
    await maker.aclose()


def _searched(brave: FakeBrave) -> list[str]:
    return [r.query.get("q", "") for r in brave.requests]


async def test_a_claim_the_first_search_missed_is_settled_by_a_planned_one(
    panel: ScriptedPanel, engine: Callable[..., Engine], brave_server: FakeBrave
) -> None:
    planned = _planner(["Elvira Quince mayor"], ["Dunmore Falls town records first mayor"])
    asked = script(panel, extractorreply=CLAIM, readerreply=_reader, planreply=planned)
    report = await engine(_settings()).check(POST)
    assert [r.queries for r in report.searches] == [
        ["Elvira Quince mayor"],
        ["Dunmore Falls town records first mayor"],
    ]
    assert [r.settled for r in report.searches] == [False, True]
    found = report.searches[1].found
    page = next(e for e in report.evidence if e.url == PAGE["url"])
    assert page.id in found and page.query == "planned"
    assert report.claims[0].label == "refutes" and report.verdict == "false"
    assert asked.asked["planreply"] == 2
    # Each query was searched once, and nothing past the one that settled it.
    searched = _searched(brave_server)
    assert sum(q.startswith("Dunmore Falls town records first mayor") for q in searched) == 1


async def test_a_planner_that_repeats_itself_stops_the_loop(
    panel: ScriptedPanel, engine: Callable[..., Engine], brave_server: FakeBrave
) -> None:
    planned = _planner(["Elvira Quince first mayor"], ["Elvira Quince first mayor?"])
    script(panel, extractorreply=CLAIM, readerreply=_reader, planreply=planned)
    report = await engine(_settings()).check(POST)
    assert len(report.searches) == 2
    assert report.searches[1].queries == [] and report.searches[1].repeats
    assert sum("Elvira Quince first mayor" in q for q in _searched(brave_server)) == 1
    assert report.claims[0].label == "not enough information"


async def test_a_loop_that_never_settles_stops_at_its_rounds(
    panel: ScriptedPanel, engine: Callable[..., Engine], brave_server: FakeBrave
) -> None:
    brave_server.respond_when(
        lambda q: "archive" in q.get("q", ""),
        brave_body([brave_result("https://a.example.org/x", "Archive", "A page of old news.")]),
    )
    planned = _planner(["old archive one"], ["newspaper archive two"], ["archive three"])
    asked = script(panel, extractorreply=CLAIM, readerreply=_reader, planreply=planned)
    report = await engine(_settings(search_rounds=2)).check(POST)
    assert [r.round for r in report.searches] == [1, 2]
    assert asked.asked["planreply"] == 2 and report.verdict == "unproven"
    off = await engine(_settings(search_rounds=0)).check(POST)
    assert off.searches == []


async def test_the_full_depth_never_searches_again(
    panel: ScriptedPanel, engine: Callable[..., Engine]
) -> None:
    asked = script(panel, extractorreply=CLAIM, readerreply=_reader, nodereply=UNSETTLED)
    report = await engine(_settings(depth="full")).check(POST)
    assert report.searches == [] and asked.asked["planreply"] == 0


async def test_the_eval_record_carries_what_the_planned_search_found(
    panel: ScriptedPanel, engine: Callable[..., Engine], tmp_path: Path
) -> None:
    """bench/quality_corpus.py scores searching again from these fields."""
    planned = _planner(["Dunmore Falls town records first mayor"])
    script(panel, extractorreply=CLAIM, readerreply=_reader, planreply=planned)
    checker = engine(_settings())
    item = EvalItem("dunmore", POST, "false", "false")
    header = RunHeader(
        run_key="k", dataset="t.jsonl", mode="full", ablation="full", labels="binary",
        models={}, limit=None, seed=0, sample=[item.id], started="2026-01-01T00:00:00+00:00",
    )  # fmt: skip
    log = ResultLog(tmp_path / "out.jsonl")
    records = await evaluate([item], checker.check, log, header, LABEL_MAPPINGS["binary"])
    record = records[item.id]
    assert record.planned_urls == [PAGE["url"]] and PAGE["url"] in record.evidence_urls
    assert record.planned_calls == 1 and record.planned_s > 0
