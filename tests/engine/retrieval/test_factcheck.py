"""The published fact-check backend (Google Fact Check Tools, ``claims:search``) over
real HTTP against the fake in ``tests/peers/servers/factcheck_peer.py``."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pydantic import ValidationError

from tests.peers.servers.factcheck_peer import (
    GOOGLE_KEY,
    FakeFactCheck,
    api_key_invalid,
    api_not_enabled,
    claim_entry,
    claim_review,
    quota_exhausted,
    server_error,
)
from tests.peers.servers.search_peers import Reply, closed_port

from zofia_engine.config import (
    FactCheckSettings,
    GoogleFactCheckSettings,
    SettingsSection,
    load_config,
)
from zofia_engine.errors import (
    ConfigError,
    SourceError,
    SourceRateLimitedError,
    SourceResponseError,
)
from zofia_engine.retrieval.factcheck.base import FactCheck, FactCheckQuery, language_code
from zofia_engine.retrieval.factcheck.factory import build_factcheck_backends
from zofia_engine.retrieval.factcheck.google import GoogleFactCheck

FAST: dict[str, Any] = {
    "timeout_s": 2.0,
    "retries": 2,
    "requests_per_second": 1000.0,
    "backoff_s": 0.001,
}
MICROCHIPS = "Covid-19 vaccines contain microchips"


@pytest_asyncio.fixture
async def server() -> AsyncIterator[FakeFactCheck]:
    """A running fake Fact Check Tools API, closed after the test."""
    async with FakeFactCheck() as fake:
        yield fake


@pytest_asyncio.fixture
async def make(server: FakeFactCheck) -> AsyncIterator[Callable[..., GoogleFactCheck]]:
    """Build clients aimed at the fake (fast retries); all closed afterwards."""
    made: list[GoogleFactCheck] = []

    def build(api_key: str = GOOGLE_KEY, **overrides: Any) -> GoogleFactCheck:
        backend = GoogleFactCheck(api_key, **{**FAST, "base_url": server.base_url, **overrides})
        made.append(backend)
        return backend

    yield build
    for backend in made:
        await backend.aclose()


def _chain(exc: BaseException) -> str:
    """Every message and repr along an exception's cause/context chain."""
    seen: list[str] = []
    current: BaseException | None = exc
    for _ in range(10):
        if current is None:
            break
        seen += [str(current), repr(current)]
        current = current.__cause__ or current.__context__
    return "\n".join(seen)


# ------------------------------------------------------------------------ request


async def test_request_path_and_params(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    await make().search(FactCheckQuery("  Covid-19 vaccines\n contain   microchips "))

    [request] = server.requests
    assert request.method == "GET"
    assert request.path == "/v1alpha1/claims:search"
    assert request.params == {
        "query": MICROCHIPS,
        "languageCode": "en",
        "pageSize": "5",
        "key": GOOGLE_KEY,
    }


@pytest.mark.parametrize(
    ("language", "code"),
    [
        ("en", "en"),
        ("French", "fr"),
        (" FR ", "fr"),
        ("pt_br", "pt-BR"),
        ("english", "en"),
        ("Klingon", None),
        ("xx", None),
        ("", None),
    ],
)
async def test_language_parameter(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck], language: str, code: str | None
) -> None:
    await make().search(FactCheckQuery(MICROCHIPS, language=language))

    assert server.requests[0].params.get("languageCode") == code
    assert language_code(language) == (code or "")


async def test_long_text_is_cut_at_a_word(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    await make().search(FactCheckQuery("microchips " * 100))

    sent = server.requests[0].params["query"]
    assert len(sent) <= 500 and sent.split() == ["microchips"] * len(sent.split())


@pytest.mark.parametrize(
    "query", [FactCheckQuery("   "), FactCheckQuery(MICROCHIPS, max_results=0)]
)
async def test_nothing_to_ask_sends_nothing(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck], query: FactCheckQuery
) -> None:
    assert await make().search(query) == []
    assert server.requests == []


# ------------------------------------------------------------------------ answers


async def test_a_match_gives_one_fact_check_per_review(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    results = await make().search(FactCheckQuery(MICROCHIPS))

    assert results[0] == FactCheck(
        claim="COVID-19 vaccines contain microchips to track people.",
        claimant="Facebook posts",
        claim_date=dt.date(2020, 12, 3),
        publisher="PolitiFact",
        publisher_site="politifact.com",
        url="https://www.politifact.com/factchecks/2020/dec/04/facebook-posts/no-covid-19-vaccines-dont-contain-microchips/",
        title="No, COVID-19 vaccines don't contain microchips",
        rating="Pants on Fire",
        reviewed=dt.date(2020, 12, 4),
        language="en",
    )
    assert [(r.publisher, r.rating, r.reviewed) for r in results] == [
        ("PolitiFact", "Pants on Fire", dt.date(2020, 12, 4)),
        ("Snopes", "False", dt.date(2020, 12, 10)),
    ]
    assert FactCheck.model_validate_json(results[1].model_dump_json()) == results[1]


async def test_no_match_is_an_empty_list(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    assert await make().search(FactCheckQuery("The moon is made of green cheese")) == []
    assert len(server.requests) == 1


async def test_language_filters_the_reviews(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    query = "vaccins Covid-19 contiennent micropuces"

    french = await make().search(FactCheckQuery(query, language="French"))
    everything = await make().search(FactCheckQuery(query + " microchips", language=""))

    assert [(r.publisher, r.rating, r.language) for r in french] == [("AFP Factuel", "Faux", "fr")]
    assert {r.publisher for r in everything} == {"AFP Factuel", "PolitiFact", "Snopes"}


async def test_publisher_fallbacks_skips_duplicates_and_max_results(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    shared = "https://fullfact.org/health/garlic-cure/"
    server.claims = [
        claim_entry(
            "Garlic cures the flu.",
            claim_review(None, "fullfact.org", shared, "Incorrect."),
            claim_review("Anon", None, "https://blog.example/garlic", ""),  # no rating
            claim_review(None, None, "https://checkers.example/garlic", "Misleading"),
        ),
        claim_entry(
            "Eating garlic cures flu.",
            claim_review("Full Fact", "fullfact.org", shared, "Incorrect."),
            claim_review("Third", "third.example", "https://third.example/garlic", "False"),
            claim_review("Fourth", "fourth.example", "https://fourth.example/garlic", "False"),
        ),
    ]

    results = await make().search(FactCheckQuery("garlic cures flu", max_results=3))

    assert [(r.publisher, r.url) for r in results] == [
        ("fullfact.org", shared),
        ("checkers.example", "https://checkers.example/garlic"),
        ("Third", "https://third.example/garlic"),
    ]
    assert results[0].claimant == "" and results[0].claim_date is None
    assert results[0].reviewed is None and results[0].title == ""


async def test_cutoff_drops_later_reviews_and_keeps_undated(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    def review(name: str, reviewed: dt.date | None) -> dict[str, Any]:
        return claim_review(
            name, f"{name}.example", f"https://{name}.example/", "False", reviewed=reviewed
        )

    server.claims = [
        claim_entry(
            "The election was stolen.",
            review("before", dt.date(2021, 1, 5)),
            review("oncutoff", dt.date(2021, 1, 10)),
            review("after", dt.date(2021, 1, 11)),
            review("undated", None),
            claim_date=dt.date(2021, 1, 4),
        ),
        claim_entry(  # no review date, but the claim itself is later than the cutoff
            "The election was stolen again.",
            review("laterclaim", None),
            claim_date=dt.date(2022, 6, 1),
        ),
    ]
    query = FactCheckQuery("election stolen", cutoff=dt.date(2021, 1, 10))

    results = await make().search(query)

    assert [r.publisher for r in results] == ["before", "oncutoff", "undated"]
    params = server.requests[0].params
    assert params["pageSize"] == "20"  # more claims asked for: later ones get dropped
    assert "maxAgeDays" not in params  # it bounds age from today, not a date in the past


@pytest.mark.parametrize(
    "body",
    [[], "text", {"claims": {}}, {"claims": ["x"]}, {"claims": [{"claimReview": {}}]}],
    ids=["list", "string", "claims-object", "claim-string", "reviews-object"],
)
async def test_wrong_shape_is_a_response_error(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck], body: Any
) -> None:
    server.script(Reply(body=body))

    with pytest.raises(SourceResponseError) as info:
        await make().search(FactCheckQuery(MICROCHIPS))

    assert info.value.source == "factcheck:google"


# ------------------------------------------------------------------------- errors


async def test_wrong_key_is_one_clear_sentence_without_the_key(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    wrong = "AIzaSyWRONG-key-9876543210"

    with pytest.raises(SourceResponseError) as info:
        await make(api_key=wrong).search(FactCheckQuery(MICROCHIPS))

    message = str(info.value)
    assert message == (
        "factcheck:google: the API key in factcheck.google.api_key was refused "
        "(HTTP 400 INVALID_ARGUMENT: API key not valid. Please pass a valid API key.); "
        "check the key and that the Fact Check Tools API is enabled for its project"
    )
    assert wrong not in _chain(info.value)
    assert len(server.requests) == 1  # not retried
    assert server.requests[0].params["key"] == wrong


async def test_api_not_enabled_403_says_the_key_was_refused(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    server.script(api_not_enabled())

    with pytest.raises(SourceResponseError) as info:
        await make().search(FactCheckQuery(MICROCHIPS))

    message = str(info.value)
    assert "the API key in factcheck.google.api_key was refused (HTTP 403" in message
    assert "Fact Check Tools API has not been used in project 123456789012" in message
    assert "\n" not in message and GOOGLE_KEY not in _chain(info.value)
    assert len(server.requests) == 1


async def test_other_400_carries_googles_message(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    server.script(
        Reply(
            status=400,
            body={
                "error": {
                    "code": 400,
                    "message": f"Request contains an invalid argument: key={GOOGLE_KEY}",
                    "status": "INVALID_ARGUMENT",
                }
            },
        )
    )

    with pytest.raises(SourceResponseError) as info:
        await make().search(FactCheckQuery(MICROCHIPS))

    assert str(info.value) == (
        "factcheck:google: request refused (HTTP 400 INVALID_ARGUMENT): "
        "Request contains an invalid argument: key=***"
    )


async def test_429_is_retried_until_success(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    server.fail(quota_exhausted(), times=2)

    results = await make(retries=2).search(FactCheckQuery(MICROCHIPS))

    assert [r.publisher for r in results] == ["PolitiFact", "Snopes"]
    assert len(server.requests) == 3


async def test_429_forever_is_rate_limited(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    server.fail(quota_exhausted(), times=10)

    with pytest.raises(SourceRateLimitedError) as info:
        await make(retries=2).search(FactCheckQuery(MICROCHIPS))

    assert str(info.value) == "factcheck:google: rate limited (HTTP 429) after 3 attempts"
    assert len(server.requests) == 3


async def test_500_is_retried_then_a_response_error(
    server: FakeFactCheck, make: Callable[..., GoogleFactCheck]
) -> None:
    server.fail(server_error(), times=10)

    with pytest.raises(SourceResponseError, match="HTTP 500 after 2 attempts"):
        await make(retries=1).search(FactCheckQuery(MICROCHIPS))

    assert len(server.requests) == 2


async def test_the_key_is_in_no_log_and_no_exception(
    server: FakeFactCheck,
    make: Callable[..., GoogleFactCheck],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    raised: list[SourceError] = []

    assert await make().search(FactCheckQuery(MICROCHIPS))
    for reply in (api_key_invalid(), api_not_enabled(), quota_exhausted(), server_error()):
        server.script(reply)
        with pytest.raises(SourceError) as info:
            await make(retries=0).search(FactCheckQuery(MICROCHIPS))
        raised.append(info.value)
    offline = GoogleFactCheck(GOOGLE_KEY, base_url=f"http://127.0.0.1:{closed_port()}", **FAST)
    try:
        with pytest.raises(SourceResponseError, match="connection failed") as info:
            await offline.search(FactCheckQuery(MICROCHIPS))
        raised.append(info.value)
    finally:
        await offline.aclose()
    assert raised[-1].__cause__ is not None  # the aiohttp error is kept when it is safe

    assert any(r.name.startswith("zofia_engine.retrieval.factcheck") for r in caplog.records)
    assert len(raised) == 5
    assert GOOGLE_KEY not in caplog.text
    assert all(GOOGLE_KEY not in r.getMessage() for r in caplog.records)
    assert all(GOOGLE_KEY not in _chain(exc) for exc in raised)


@pytest.mark.parametrize("key", ["", "   "])
def test_empty_key_is_a_config_error(key: str) -> None:
    with pytest.raises(ConfigError) as info:
        GoogleFactCheck(key)

    assert "factcheck.google.api_key" in str(info.value)
    assert "GOOGLE_FACTCHECK_API_KEY" in str(info.value)


# ------------------------------------------------------------------------- config


class _Deployment(SettingsSection):
    """A schema with the section, as EngineSettings will have it."""

    factcheck: FactCheckSettings = FactCheckSettings()


def test_offline_by_default() -> None:
    settings = FactCheckSettings()

    assert settings.backends == [] and build_factcheck_backends(settings) == []
    assert settings.max_results == 5 and settings.min_similarity == 0.6


@pytest.mark.parametrize("key", ["", "  "])
def test_google_without_key_is_refused(key: str) -> None:
    with pytest.raises(ValidationError) as info:
        FactCheckSettings(backends=["google"], google=GoogleFactCheckSettings(api_key=key))

    assert "factcheck.google.api_key is empty" in str(info.value)
    assert "GOOGLE_FACTCHECK_API_KEY" in str(info.value)


def test_load_config_names_the_missing_key(tmp_path: Path) -> None:
    path = tmp_path / "zofia.toml"
    path.write_text('[factcheck]\nbackends = ["google"]\n', encoding="utf-8")

    with pytest.raises(ConfigError, match=r"factcheck\.google\.api_key is empty"):
        load_config(path, environ={}, schema=_Deployment)


@pytest.mark.parametrize("name", ["GOOGLE_FACTCHECK_API_KEY", "ZOFIA__FACTCHECK__GOOGLE__API_KEY"])
def test_key_from_the_environment(tmp_path: Path, name: str) -> None:
    path = tmp_path / "zofia.toml"
    path.write_text('[factcheck]\nbackends = ["google"]\n', encoding="utf-8")

    settings = load_config(path, environ={name: GOOGLE_KEY}, schema=_Deployment)

    assert settings.factcheck.google.api_key == GOOGLE_KEY
    assert settings.factcheck.backends == ["google"]


async def test_factory_builds_google_from_settings(server: FakeFactCheck) -> None:
    settings = FactCheckSettings(
        backends=["google", "google"],
        retries=0,
        timeout_s=2.0,
        google=GoogleFactCheckSettings(
            api_key=GOOGLE_KEY, base_url=server.base_url + "/", requests_per_second=100.0
        ),
    )
    [backend] = build_factcheck_backends(settings)
    server.script(quota_exhausted())
    try:
        assert backend.name == "factcheck:google"
        with pytest.raises(SourceRateLimitedError, match="after 1 attempts"):
            await backend.search(FactCheckQuery(MICROCHIPS))
        assert len(await backend.search(FactCheckQuery(MICROCHIPS, max_results=1))) == 1
    finally:
        await backend.aclose()

    assert len(server.requests) == 2
