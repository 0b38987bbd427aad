"""The open-web backends (paper §3.4, eq. 6) over real HTTP against fake servers.

The fakes in ``tests/peers/servers/search_peers.py`` speak Brave's and SearXNG's wire
formats, so these tests exercise the real client: query string, headers,
retries, timeouts and error translation.
"""

from __future__ import annotations

import datetime as dt
import email.utils
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio
import tenacity

from tests.peers.servers.search_peers import (
    BRAVE_TOKEN,
    FakeBrave,
    FakeSearxng,
    Reply,
    brave_body,
    brave_error,
    brave_rate_limited,
    brave_result,
    closed_port,
    searxng_body,
    searxng_result,
)

from zofia_engine.config import BraveSettings, SearxngSettings, WebSettings
from zofia_engine.errors import (
    ConfigError,
    SourceRateLimitedError,
    SourceResponseError,
    SourceTimeoutError,
)
from zofia_engine.language import LANGUAGE_NAMES
from zofia_engine.records.stage1 import WebResult
from zofia_engine.retrieval.web.base import SearchBackend, WebQuery
from zofia_engine.retrieval.web.brave import SEARCH_LANGS, BraveSearch
from zofia_engine.retrieval.web.factory import build_search_backends
from zofia_engine.retrieval.web.searxng import SearxngSearch
from zofia_engine.retrying import Backoff, retry_delay

pytest_plugins = ["tests.peers.fixtures.search_fixtures"]

FAST: dict[str, Any] = {
    "timeout_s": 2.0,
    "retries": 2,
    "requests_per_second": 1000.0,
    "backoff_s": 0.001,
}
CUTOFF = dt.date(2023, 5, 9)
PAPER_EXCLUDES = tuple(WebSettings().exclude_domains)


@pytest_asyncio.fixture
async def make_brave(brave_server: FakeBrave) -> AsyncIterator[Callable[..., BraveSearch]]:
    """Build Brave clients aimed at the fake (fast retries); all closed afterwards."""
    made: list[BraveSearch] = []

    def make(api_key: str = BRAVE_TOKEN, **overrides: Any) -> BraveSearch:
        options = {**FAST, "base_url": brave_server.base_url, **overrides}
        backend = BraveSearch(api_key, **options)
        made.append(backend)
        return backend

    yield make
    for backend in made:
        await backend.aclose()


@pytest_asyncio.fixture
async def make_searxng(
    searxng_server: FakeSearxng,
) -> AsyncIterator[Callable[..., SearxngSearch]]:
    """Build SearXNG clients aimed at the fake (fast retries); all closed afterwards."""
    made: list[SearxngSearch] = []

    def make(**overrides: Any) -> SearxngSearch:
        options = {**FAST, **overrides}
        backend = SearxngSearch(options.pop("base_url", searxng_server.base_url), **options)
        made.append(backend)
        return backend

    yield make
    for backend in made:
        await backend.aclose()


def urls(results: list[WebResult]) -> list[str]:
    return [r.url for r in results]


# ----------------------------------------------------------------- Brave: request


async def test_brave_request_has_eq6_query_filters_and_token(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    results = await make_brave().search(WebQuery(("Angela Merkel", "Paris")))

    assert results == []  # Brave leaves out "web" when nothing matched
    [request] = brave_server.requests
    assert request.method == "GET"
    assert request.path == "/res/v1/web/search"
    assert request.params == {
        "q": '"Angela Merkel" "Paris" -site:wikipedia.org',
        "count": "20",
        "result_filter": "web",
        "extra_snippets": "true",
        "safesearch": "moderate",
    }
    assert request.headers["X-Subscription-Token"] == BRAVE_TOKEN
    assert request.headers["Accept"] == "application/json"


@pytest.mark.parametrize(("max_results", "count"), [(1, "2"), (3, "6"), (10, "20"), (20, "20")])
async def test_brave_count_leaves_room_for_filtering(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch], max_results: int, count: str
) -> None:
    await make_brave().search(WebQuery(("Paris",), max_results=max_results))

    assert brave_server.requests[0].params["count"] == count


async def test_brave_cutoff_becomes_custom_freshness_range(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    await make_brave().search(WebQuery(("Paris",), cutoff=CUTOFF))

    assert brave_server.requests[0].params["freshness"] == "1970-01-01to2023-05-09"


async def test_brave_quotes_embedded_in_keywords_do_not_break_the_phrase(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    await make_brave().search(WebQuery(('The "Iron" Lady', "  ", "UK")))

    assert brave_server.requests[0].params["q"] == '"The  Iron  Lady" "UK" -site:wikipedia.org'


async def test_brave_overlong_query_drops_trailing_keywords_instead_of_422(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    keywords = tuple(f"keyword number {i}" for i in range(30))  # 90 words

    await make_brave().search(WebQuery(keywords))

    q = brave_server.requests[0].params["q"]
    assert len(q) <= 400 and len(q.split()) <= 50
    assert q.startswith('"keyword number 0" "keyword number 1" ')
    assert q.endswith('" -site:wikipedia.org')
    assert '"keyword number 29"' not in q


async def test_brave_no_keywords_sends_nothing(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    assert await make_brave().search(WebQuery(("", "  "))) == []
    assert brave_server.requests == []


# ---------------------------------------------------------------- Brave: parsing


async def test_brave_maps_results_and_strips_markup(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    brave_server.respond(
        brave_body(
            [
                brave_result(
                    "https://example.org/merkel-paris",
                    title="<strong>Merkel</strong> visits Paris &amp; Lyon",
                    description="Angela <strong>Merkel</strong> met the &quot;mayor&quot;.",
                    page_age="2023-03-29T08:15:03",
                    extra_snippets=["First <b>extra</b>  snippet.", "Second &lt;one&gt;."],
                ),
                brave_result("https://example.com/b", page_age="not a date", age="2 days ago"),
                brave_result("https://example.net/c", age="March 3, 2023"),
                {"title": "no url at all", "description": "skipped"},
            ]
        )
    )

    results = await make_brave().search(WebQuery(("Merkel",)))

    assert results[0] == WebResult(
        title="Merkel visits Paris & Lyon",
        url="https://example.org/merkel-paris",
        snippet='Angela Merkel met the "mayor".',
        description="First extra snippet. Second <one>.",
        published=dt.date(2023, 3, 29),
        source="web:brave",
    )
    assert [(r.url, r.published, r.description) for r in results[1:]] == [
        ("https://example.com/b", None, ""),
        ("https://example.net/c", dt.date(2023, 3, 3), ""),
    ]


async def test_brave_drops_excluded_domains_and_keeps_max_results(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    brave_server.respond(
        brave_body(
            [
                brave_result("https://en.wikipedia.org/wiki/Angela_Merkel"),
                brave_result("https://www.reuters.com/world/merkel"),
                brave_result("https://factcheck.example/one"),
                brave_result("https://news.google.com/articles/x"),
                brave_result("https://edition.cnn.com/2023/merkel"),
                brave_result("https://blog.example/two"),
                brave_result("https://third.example/three"),
            ]
        )
    )
    query = WebQuery(("Merkel",), max_results=2, exclude_domains=PAPER_EXCLUDES)

    results = await make_brave().search(query)

    assert urls(results) == ["https://factcheck.example/one", "https://blog.example/two"]


async def test_brave_drops_results_dated_after_cutoff(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    brave_server.respond(
        brave_body(
            [
                brave_result("https://a.example/before", page_age="2023-05-01T10:00:00"),
                brave_result("https://a.example/on-cutoff", page_age="2023-05-09T23:59:59"),
                brave_result("https://a.example/after", page_age="2023-05-10T00:00:00"),
                brave_result("https://a.example/after-utc", page_age="2024-01-02T03:04:05Z"),
                brave_result("https://a.example/undated"),
            ]
        )
    )

    results = await make_brave().search(WebQuery(("Merkel",), cutoff=CUTOFF))

    assert urls(results) == [
        "https://a.example/before",
        "https://a.example/on-cutoff",
        "https://a.example/undated",
    ]


@pytest.mark.parametrize(
    "body",
    [
        [],
        "just a string",
        {"web": []},
        {"web": {"results": {}}},
        {"web": {"results": ["https://x.example"]}},
    ],
    ids=["list", "string", "web-not-object", "results-not-list", "result-not-object"],
)
async def test_brave_wrong_shape_is_a_response_error(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch], body: Any
) -> None:
    brave_server.respond(body)

    with pytest.raises(SourceResponseError) as info:
        await make_brave().search(WebQuery(("Merkel",)))

    assert info.value.source == "web:brave"
    assert len(brave_server.requests) == 1


# ----------------------------------------------------------------- Brave: errors


async def test_brave_429_is_retried_until_success(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    brave_server.script(brave_rate_limited(retry_after="0"), brave_rate_limited(retry_after=None))
    brave_server.respond(brave_body([brave_result("https://ok.example/page")]))

    results = await make_brave(retries=2).search(WebQuery(("Merkel",)))

    assert urls(results) == ["https://ok.example/page"]
    assert len(brave_server.requests) == 3
    assert all(r.headers["X-Subscription-Token"] == BRAVE_TOKEN for r in brave_server.requests)


async def test_brave_429_forever_raises_rate_limited(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    brave_server.respond(brave_rate_limited(retry_after="0"))

    with pytest.raises(SourceRateLimitedError) as info:
        await make_brave(retries=2).search(WebQuery(("Merkel",)))

    assert info.value.source == "web:brave"
    assert "3 attempts" in str(info.value)
    assert len(brave_server.requests) == 3


async def test_brave_500_is_retried_then_a_response_error(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    brave_server.respond(Reply(status=500, body=brave_error(500, "INTERNAL", "Oops")))

    with pytest.raises(SourceResponseError, match="HTTP 500 after 2 attempts"):
        await make_brave(retries=1).search(WebQuery(("Merkel",)))

    assert len(brave_server.requests) == 2


async def test_brave_slow_answer_is_a_timeout(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    # Each answer would come after 1 s: a timeout on both attempts means the client gave
    # up on each at its 0.2 s instead of waiting for it.
    brave_server.respond(Reply(body=brave_body([brave_result("https://x.example")]), delay_s=1.0))

    with pytest.raises(SourceTimeoutError) as info:
        await make_brave(timeout_s=0.2, retries=1).search(WebQuery(("Merkel",)))

    assert info.value.source == "web:brave"
    assert "2 attempts" in str(info.value)
    assert len(brave_server.requests) == 2


async def test_brave_malformed_json_fails_without_retry(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    brave_server.respond(Reply(raw=b'{"web": '))

    with pytest.raises(SourceResponseError, match="malformed JSON"):
        await make_brave(retries=3).search(WebQuery(("Merkel",)))

    assert len(brave_server.requests) == 1


async def test_brave_bad_token_is_a_401_response_error(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    with pytest.raises(SourceResponseError) as info:
        await make_brave(api_key="not-the-token").search(WebQuery(("Merkel",)))

    assert "401" in str(info.value)
    assert "SUBSCRIPTION_TOKEN_INVALID" in str(info.value)
    assert len(brave_server.requests) == 1  # an auth failure is not retried
    assert brave_server.requests[0].headers["X-Subscription-Token"] == "not-the-token"


async def test_brave_closed_port_is_a_response_error() -> None:
    backend = BraveSearch(BRAVE_TOKEN, base_url=f"http://127.0.0.1:{closed_port()}/res/v1", **FAST)
    try:
        with pytest.raises(SourceResponseError, match="connection failed"):
            await backend.search(WebQuery(("Merkel",)))
    finally:
        await backend.aclose()


@pytest.mark.parametrize("key", ["", "   "])
def test_brave_empty_key_is_a_config_error(key: str) -> None:
    with pytest.raises(ConfigError, match="api_key"):
        BraveSearch(key)


async def test_brave_from_settings_uses_url_key_and_retries(brave_server: FakeBrave) -> None:
    web = WebSettings(
        backends=["brave"],
        retries=0,
        timeout_s=2.0,
        brave=BraveSettings(
            api_key=BRAVE_TOKEN, base_url=brave_server.base_url, requests_per_second=100.0
        ),
    )
    brave_server.script(Reply(status=503, raw=b"busy", headers={"Retry-After": "0"}))
    brave_server.respond(brave_body([brave_result("https://ok.example/")]))
    backend = BraveSearch.from_settings(web)
    try:
        with pytest.raises(SourceResponseError, match="HTTP 503 after 1 attempts"):
            await backend.search(WebQuery(("Merkel",)))
        assert urls(await backend.search(WebQuery(("Merkel",)))) == ["https://ok.example/"]
    finally:
        await backend.aclose()

    assert len(brave_server.requests) == 2


# ---------------------------------------------------------------------- SearXNG


async def test_searxng_request_params(
    searxng_server: FakeSearxng, make_searxng: Callable[..., SearxngSearch]
) -> None:
    backend = make_searxng(base_url=searxng_server.base_url + "/")

    results = await backend.search(WebQuery(("Angela Merkel", "Paris"), cutoff=CUTOFF))

    assert results == []
    [request] = searxng_server.requests
    assert request.method == "GET"
    assert request.path == "/search"
    assert request.params == {
        "q": '"Angela Merkel" "Paris" -site:wikipedia.org',
        "format": "json",
        "categories": "general",
        "language": "all",
        "safesearch": "1",
        "pageno": "1",
    }  # no time_range: the cutoff is enforced on the answer
    assert request.headers["Accept"] == "application/json"


async def test_searxng_maps_results(
    searxng_server: FakeSearxng, make_searxng: Callable[..., SearxngSearch]
) -> None:
    searxng_server.respond(
        searxng_body(
            [
                searxng_result(
                    "https://example.org/merkel",
                    title="Merkel &amp; Macron",
                    content="Angela <b>Merkel</b> met Macron in   Paris.",
                    published="2023-03-29T00:00:00",
                ),
                {"title": "no url", "content": "skipped", "category": "general"},
            ]
        )
    )

    results = await make_searxng().search(WebQuery(("Merkel",)))

    assert results == [
        WebResult(
            title="Merkel & Macron",
            url="https://example.org/merkel",
            snippet="Angela Merkel met Macron in Paris.",
            description="",
            published=dt.date(2023, 3, 29),
            source="web:searxng",
        )
    ]


async def test_searxng_enforces_cutoff_and_keeps_undated(
    searxng_server: FakeSearxng, make_searxng: Callable[..., SearxngSearch]
) -> None:
    searxng_server.respond(
        searxng_body(
            [
                searxng_result("https://a.example/before", published="2023-04-30T12:00:00"),
                searxng_result("https://a.example/after", published="2023-05-10T00:00:00"),
                searxng_result("https://a.example/null", published=None),
                searxng_result("https://a.example/missing"),
                searxng_result("https://a.example/on-cutoff", published="2023-05-09"),
                searxng_result("https://a.example/later-tz", published="2023-06-01T08:00:00+02:00"),
                searxng_result("https://a.example/garbled", published="yesterday"),
            ]
        )
    )

    results = await make_searxng().search(WebQuery(("Merkel",), cutoff=CUTOFF))

    assert urls(results) == [
        "https://a.example/before",
        "https://a.example/null",
        "https://a.example/missing",
        "https://a.example/on-cutoff",
        "https://a.example/garbled",
    ]


async def test_searxng_drops_news_and_excluded_and_keeps_max_results(
    searxng_server: FakeSearxng, make_searxng: Callable[..., SearxngSearch]
) -> None:
    searxng_server.respond(
        searxng_body(
            [
                searxng_result("https://de.wikipedia.org/wiki/Merkel"),
                searxng_result("https://small-paper.example/story", category="news"),
                searxng_result("https://one.example/"),
                searxng_result("https://www.theguardian.com/politics/merkel"),
                searxng_result("https://two.example/"),
                searxng_result("https://three.example/"),
            ]
        )
    )
    query = WebQuery(("Merkel",), max_results=2, exclude_domains=PAPER_EXCLUDES)

    results = await make_searxng().search(query)

    assert urls(results) == ["https://one.example/", "https://two.example/"]


async def test_searxng_no_results_because_engines_failed_is_an_error(
    searxng_server: FakeSearxng, make_searxng: Callable[..., SearxngSearch]
) -> None:
    searxng_server.respond(
        searxng_body([], unresponsive=[["google", "CAPTCHA"], ["bing", "timeout"]])
    )

    with pytest.raises(SourceResponseError, match="google CAPTCHA, bing timeout"):
        await make_searxng().search(WebQuery(("Merkel",)))


async def test_searxng_results_despite_some_unresponsive_engines(
    searxng_server: FakeSearxng, make_searxng: Callable[..., SearxngSearch]
) -> None:
    searxng_server.respond(
        searxng_body([searxng_result("https://ok.example/")], unresponsive=[["google", "timeout"]])
    )

    assert urls(await make_searxng().search(WebQuery(("Merkel",)))) == ["https://ok.example/"]


async def test_searxng_json_format_disabled_is_a_403_error(
    searxng_server: FakeSearxng, make_searxng: Callable[..., SearxngSearch]
) -> None:
    searxng_server.json_enabled = False

    with pytest.raises(SourceResponseError, match="HTTP 403"):
        await make_searxng().search(WebQuery(("Merkel",)))

    assert len(searxng_server.requests) == 1


async def test_searxng_503_is_retried_until_success(
    searxng_server: FakeSearxng, make_searxng: Callable[..., SearxngSearch]
) -> None:
    searxng_server.script(
        Reply(status=503, raw=b"<h1>busy</h1>", content_type="text/html"),
        Reply(status=429, raw=b"Too Many Requests", headers={"Retry-After": "0"}),
    )
    searxng_server.respond(searxng_body([searxng_result("https://ok.example/")]))

    results = await make_searxng(retries=2).search(WebQuery(("Merkel",)))

    assert urls(results) == ["https://ok.example/"]
    assert len(searxng_server.requests) == 3


@pytest.mark.parametrize(
    "body",
    [
        {"query": "Merkel", "answers": []},
        {"results": {"url": "https://x.example"}},
        {"results": [["https://x.example"]]},
        [searxng_result("https://x.example")],
    ],
    ids=["no-results", "results-not-list", "result-not-object", "list"],
)
async def test_searxng_wrong_shape_is_a_response_error(
    searxng_server: FakeSearxng, make_searxng: Callable[..., SearxngSearch], body: Any
) -> None:
    searxng_server.respond(body)

    with pytest.raises(SourceResponseError) as info:
        await make_searxng().search(WebQuery(("Merkel",)))

    assert info.value.source == "web:searxng"


async def test_searxng_malformed_json_fails_without_retry(
    searxng_server: FakeSearxng, make_searxng: Callable[..., SearxngSearch]
) -> None:
    searxng_server.respond(Reply(raw=b'{"results": [{"url": '))

    with pytest.raises(SourceResponseError, match="malformed JSON"):
        await make_searxng().search(WebQuery(("Merkel",)))

    assert len(searxng_server.requests) == 1


def test_searxng_empty_base_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="base_url"):
        SearxngSearch("  ")


async def test_searxng_from_settings_uses_url_and_categories(
    searxng_server: FakeSearxng,
) -> None:
    web = WebSettings(
        backends=["searxng"],
        searxng=SearxngSettings(base_url=searxng_server.base_url, categories="general,science"),
    )
    backend = SearxngSearch.from_settings(web)
    try:
        await backend.search(WebQuery(("Merkel",)))
    finally:
        await backend.aclose()

    assert searxng_server.requests[0].params["categories"] == "general,science"


# ---------------------------------------------------------------------- factory


@pytest.mark.parametrize(
    ("names", "types"),
    [
        (["searxng", "brave"], [SearxngSearch, BraveSearch]),
        (["brave", "searxng"], [BraveSearch, SearxngSearch]),
        (["brave", "brave"], [BraveSearch]),
        ([], []),
    ],
)
async def test_build_search_backends_follows_settings_order(
    names: list[str], types: list[type[SearchBackend]]
) -> None:
    web = WebSettings.model_validate(
        {
            "backends": names,
            "brave": {"api_key": "k"},
            "searxng": {"base_url": "http://127.0.0.1:8888"},
        }
    )

    backends = build_search_backends(web)
    try:
        assert [type(b) for b in backends] == types
        assert [b.name for b in backends] == [t.name for t in types]
    finally:
        for backend in backends:
            await backend.aclose()


def test_offline_default_builds_no_backends() -> None:
    assert build_search_backends(WebSettings()) == []


async def test_brave_rate_limit_reset_header_sets_the_wait(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    # No Retry-After; the spent per-second window resets in 0 s: retried at once,
    # even though the configured exponential backoff would wait 5 s.
    brave_server.script(brave_rate_limited(remaining="0, 14000", reset="0, 1000000"))
    brave_server.respond(brave_body([brave_result("https://ok.example/page")]))

    # The wait the headers ask for is retry_delay's (test_retry_delay_from_headers), and
    # it wins over the backoff (test_a_wait_the_server_asks_for_wins_over_the_backoff).
    results = await make_brave(retries=2, backoff_s=5.0).search(WebQuery(("Merkel",)))

    assert urls(results) == ["https://ok.example/page"]
    assert len(brave_server.requests) == 2
    spent = {"X-RateLimit-Remaining": "0, 14000", "X-RateLimit-Reset": "0, 1000000"}
    assert retry_delay(spent) == 0  # what those headers ask: at once


async def test_brave_spent_monthly_quota_fails_fast(
    brave_server: FakeBrave, make_brave: Callable[..., BraveSearch]
) -> None:
    brave_server.respond(brave_rate_limited(remaining="0, 0", reset="1, 1000000"))

    with pytest.raises(SourceRateLimitedError, match=r"quota exhausted.*1000000 s"):
        await make_brave(retries=3).search(WebQuery(("Merkel",)))

    assert len(brave_server.requests) == 1


def _after_failure(attempt: int, exc: BaseException) -> tenacity.RetryCallState:
    """tenacity's state after attempt number ``attempt`` raised ``exc``."""
    state = tenacity.RetryCallState(tenacity.AsyncRetrying(), None, (), {})
    state.attempt_number = attempt
    state.set_exception((type(exc), exc, None))
    return state


def test_a_wait_the_server_asks_for_wins_over_the_backoff() -> None:
    """The wait between two attempts, as decided (no clock): what the failed answer asked
    for (``0``: at once), capped; else the exponential backoff, capped."""
    asked = {"at once": 0.0, "a minute": 60.0}
    wait = Backoff(5.0, 8.0, lambda exc: asked.get(str(exc)), jitter=False)
    assert wait(_after_failure(1, RuntimeError("at once"))) == 0.0
    assert wait(_after_failure(1, RuntimeError("a minute"))) == 8.0  # the cap
    assert wait(_after_failure(1, RuntimeError("nothing said"))) == 5.0
    assert wait(_after_failure(3, RuntimeError("nothing said"))) == 8.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date already past
        ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25),
        ({"X-RateLimit-Remaining": "0, 10", "X-RateLimit-Reset": "2, 900"}, 2.0),
        ({"X-RateLimit-Remaining": "0, 0", "X-RateLimit-Reset": "2, 900"}, 900.0),
        ({"X-RateLimit-Remaining": "5, 10", "X-RateLimit-Reset": "2, 900"}, None),
        ({"X-RateLimit-Reset": "4"}, 4.0),
        ({}, None),
    ],
)
def test_retry_delay_from_headers(headers: dict[str, str], expected: float | None) -> None:
    assert retry_delay(headers) == expected


def test_retry_after_as_a_date_is_the_time_until_it() -> None:
    when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=120)
    delay = retry_delay({"Retry-After": email.utils.format_datetime(when, usegmt=True)})
    assert delay is not None and 110 <= delay <= 120


def test_brave_is_asked_in_the_posts_language_when_it_has_a_code_for_it() -> None:
    assert set(SEARCH_LANGS) <= set(LANGUAGE_NAMES)  # only languages the engine tells
    assert SEARCH_LANGS["pl"] == "pl" and SEARCH_LANGS["no"] == "nb"
    assert "pt" not in SEARCH_LANGS and "zh" not in SEARCH_LANGS
