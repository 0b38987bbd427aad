"""Which documents count as evidence: the search modes' exclusions and the
counter-evidence query, against the fake Brave API on 127.0.0.1 and the real Stage-1
models (the post's keywords come from spaCy and MiniLM)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.peers.servers.search_peers import BRAVE_TOKEN, FakeBrave, brave_body, brave_result

from zofia_engine.config import EngineSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.web.brave import BraveSearch

pytest_plugins = ["tests.peers.fixtures.search_fixtures", "tests.peers.fixtures.model_fixtures"]
pytestmark = pytest.mark.slow

POST = (
    "Volvo Cars will close its plant in Gothenburg next year, chief executive Jim Rowan "
    "told reporters on Tuesday."
)
MAIN_HITS = [
    brave_result("https://www.reuters.com/business/volvo-plant", "Reuters: Volvo plant"),
    brave_result("https://apnews.com/article/volvo", "AP: Volvo"),
    brave_result("https://blog.example.org/volvo", "A blog"),
    brave_result("https://en.wikipedia.org/wiki/Volvo_Cars", "Volvo Cars - Wikipedia"),
]
COUNTER_HITS = [
    brave_result("https://www.politifact.com/factchecks/volvo", "Fact check: Volvo plant"),
    brave_result("https://blog.example.org/volvo", "A blog"),  # also found by the main query
]


def _counter(query: Mapping[str, str]) -> bool:
    return " OR " in query.get("q", "")


async def _run(
    brave_server: FakeBrave, ner: NERBackend, encoder: SentenceTransformerEncoder, **retrieval: Any
) -> Any:
    brave_server.respond(brave_body(MAIN_HITS))
    brave_server.respond_when(_counter, brave_body(COUNTER_HITS))
    settings = EngineSettings.model_validate({"retrieval": retrieval})
    brave = BraveSearch(BRAVE_TOKEN, base_url=brave_server.base_url, requests_per_second=1000.0)
    async with EntityGuidedRetrieval(
        settings, ner=ner, encoder=encoder, search_backends=[brave], wikipedia=False
    ) as stage1:
        return await stage1.run(POST)


async def test_live_keeps_news_and_fact_check_sites_and_adds_a_marked_counter_query(
    brave_server: FakeBrave, ner: NERBackend, encoder: SentenceTransformerEncoder
) -> None:
    result = await _run(brave_server, ner, encoder)
    assert result.mode == "live"
    main, counter = sorted(brave_server.requests, key=lambda r: _counter(r.query))
    assert not _counter(main.query) and _counter(counter.query)
    # The counter query: the top keywords, each a phrase, and any of the debunking terms.
    assert counter.query["q"] == result.counter_query + " -site:wikipedia.org"
    assert result.counter_query.endswith('("fact check" OR hoax OR false OR debunked)')
    assert result.keywords[0].text in result.counter_query
    found = {hit.url: hit.query for hit in result.web}
    assert found == {
        "https://www.reuters.com/business/volvo-plant": "main",  # news: evidence, live
        "https://apnews.com/article/volvo": "main",
        "https://blog.example.org/volvo": "main",  # the main query found it first
        "https://www.politifact.com/factchecks/volvo": "counter",
    }
    statuses = {s.name: s.status for s in result.sources}
    assert statuses["web:brave"] == statuses["web:brave (counter)"] == "ok"


async def test_paper_mode_keeps_zofias_exclusions(
    brave_server: FakeBrave, ner: NERBackend, encoder: SentenceTransformerEncoder
) -> None:
    result = await _run(brave_server, ner, encoder, mode="paper")
    assert result.mode == "paper"
    urls = [hit.url for hit in result.web]
    assert "https://www.reuters.com/business/volvo-plant" not in urls
    assert "https://apnews.com/article/volvo" not in urls
    assert "https://blog.example.org/volvo" in urls
    assert not any("wikipedia.org" in url for url in urls)  # in both modes


async def test_the_counter_query_can_be_off(
    brave_server: FakeBrave, ner: NERBackend, encoder: SentenceTransformerEncoder
) -> None:
    result = await _run(brave_server, ner, encoder, counter_query=False)
    assert len(brave_server.requests) == 1 and not _counter(brave_server.requests[0].query)
    assert result.counter_query == "" and all(hit.query == "main" for hit in result.web)
