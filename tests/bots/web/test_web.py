"""The report pages over a real SQLite store, through aiohttp's test client: the page
and what it shows, the JSON route and its cap, the 404 pages (unknown, purged,
pending, failed), the security headers, the per-address rate, and hostile strings
rendered inert (checked here in the markup; ``test_web_browser`` checks them in
Chromium)."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import re
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from click.testing import CliRunner

from tests.factories import (
    POST,
    RTL,
    full_report,
    hostile_report,
    stored_check,
)
from tests.peers.fakes.fake_checker import scripted_report
from tests.peers.fixtures.store_fixtures import migrated_copy

from bots.app.settings import Settings
from bots.cli import main
from bots.render.card import VERDICTS
from bots.render.languages import LANGUAGES, language_tag
from bots.service.pages import ReportPages
from bots.web.app import build_app, site_beside_bot
from bots.web.clients import client_bucket
from bots.web.parts import STEP_FAILED
from bots.web.safety import redact
from bots.web.settings import SiteSettings
from storage.opening import open_store
from storage.store import CheckStore
from zofia_engine.config import load_config
from zofia_engine.errors import ConfigError
from zofia_engine.post import Post
from zofia_engine.report import TRIAGED, Analyses, Report

SECRET = "s3cret-for-tests-only"
Client = Callable[..., Any]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[CheckStore]:
    path = migrated_copy(tmp_path / "zofia.db")  # a new store, migrated once a session
    settings = Settings.model_validate({"storage": {"path": str(path), "secret": SECRET}})
    opened, _ = open_store(settings.storage)
    yield opened
    opened.close()


@pytest_asyncio.fixture
async def client(store: CheckStore) -> AsyncIterator[Client]:
    """Starts a test client on the pages of ``store``, with the ``[site]`` settings given."""
    started: list[TestClient[Any, Any]] = []

    async def start(**site: Any) -> TestClient[Any, Any]:
        app = build_app(ReportPages(store), SiteSettings(**site), retention_days=30)
        running: TestClient[Any, Any] = TestClient(TestServer(app))
        await running.start_server()
        started.append(running)
        return running

    yield start
    for running in started:
        await running.close()


class Markup(HTMLParser):
    """Every tag with its attributes, and the text, of a page."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def links(self) -> list[dict[str, str]]:
        return [attrs for tag, attrs in self.tags if tag == "a"]


def report_of(verdict: str) -> Report:
    if verdict in TRIAGED:
        return scripted_report(Post(text=POST), verdict=verdict)
    return full_report(verdict)


# -- the page ----------------------------------------------------------------------------


async def test_the_page_shows_the_whole_report(client: Client, store: CheckStore) -> None:
    report = full_report("false")
    row = stored_check(store, report, url="https://example.org/viral-post", language="French")
    response = await (await client()).get(f"/c/{row.id}")
    assert response.status == 200
    assert response.content_type == "text/html" and response.charset == "utf-8"
    html = await response.text()
    assert len(html.encode()) < 100_000
    assert '<html lang="fr" dir="ltr">' in html
    page = Markup(html)
    text = " ".join(page.text)
    assert "False" in text and "Confidence 87%" in text and report.summary in text
    # What was checked: the post, its link, the text read from its image.
    assert POST in text and "BIKES BANNED IN SPRINGFIELD" in text
    assert {"href": "https://example.org/viral-post", "rel": "noopener nofollow ugc"} in [
        {k: v for k, v in attrs.items() if k in ("href", "rel")} for attrs in page.links()
    ]
    assert "Published fact-checks" in text and "PolitiFact" in text
    for claim in report.claims:
        assert claim.text in text
    for turn in report.debate.turns:
        assert turn.argument in text and turn.rebuttal in text
    for ruling in report.debate.rulings:
        assert ruling.reason in text
    for item in report.evidence:
        assert item.title in text
    for finding in report.analyses.linguist:
        assert finding.analysis in text
    assert report.analyses.expert is not None
    assert report.analyses.expert.knowledge_concordance in text
    # Citations link to their documents' anchors; every anchor exists.
    anchors = {attrs["id"] for _, attrs in page.tags if "id" in attrs}
    cited = [a["href"][1:] for a in page.links() if a.get("href", "").startswith("#")]
    assert cited and set(cited) <= anchors
    # What failed, without where the backends run.
    assert "searxng failed" in text and "1 of 24 model calls failed." in text
    assert "192.168.1.20" not in html and "10.0.0.5" not in html and "[address]" in text
    # Timings and cost folded away; the three charts drawn inline.
    details = [attrs for tag, attrs in page.tags if tag == "details"]
    assert {"id": "cost"} in details  # no "open"
    assert [attrs["class"] for tag, attrs in page.tags if tag == "svg"] == [
        "pic gauge",
        "pic tree",
        "pic bar",
    ]


@pytest.mark.parametrize("verdict", list(VERDICTS))
async def test_every_verdict_has_its_page(client: Client, store: CheckStore, verdict: str) -> None:
    row = stored_check(store, report_of(verdict))
    html = await (await (await client()).get(f"/c/{row.id}")).text()
    _, headline, colour = VERDICTS[verdict]
    assert f'class="verdict v-{verdict}"' in html
    assert f"{headline}</h1>" in html.replace("&#39;", "'")
    assert f".v-{verdict}{{--c:#{colour:06x}}}" in html


async def test_triage_is_shown_when_it_decided(client: Client, store: CheckStore) -> None:
    running = await client()
    scam = stored_check(store, report_of("scam"), text="Your bank account is locked, log in")
    html = await (await running.get(f"/c/{scam.id}")).text()
    assert "Triage: scam" in html and "a look-alike bank domain; asks for a login" in html
    claim = stored_check(store, full_report("false"))  # triage found a claim: the usual path
    assert 'id="triage"' not in await (await running.get(f"/c/{claim.id}")).text()


async def test_a_panel_that_was_not_asked_says_why(client: Client, store: CheckStore) -> None:
    running = await client()
    report = report_of("unproven")
    report.analyses = Analyses(held=False)
    html = await (await running.get(f"/c/{stored_check(store, report).id}")).text()
    assert 'id="analyses"' in html and "The linguist and the domain expert were not asked" in html
    assert "no claim was settled by the evidence" in html
    # A settled core claim is the other reason: the page says that one, not the first.
    settled = report_of("false")
    settled.analyses = Analyses(held=False)
    settled.debate.stopped_by = "settled"
    page = await (await running.get(f"/c/{stored_check(store, settled, text='x').id}")).text()
    assert "the evidence settled the core claim" in page and "no claim was settled" not in page
    asked = await (await running.get(f"/c/{stored_check(store, full_report('false')).id}")).text()
    assert "were not asked" not in asked


async def test_the_gauge_and_bar_follow_the_report(client: Client, store: CheckStore) -> None:
    row = stored_check(store, full_report("true"))
    html = await (await (await client()).get(f"/c/{row.id}")).text()
    assert 'aria-label="Confidence: 87%"' in html
    # Two documents support, one is neutral, two refute; the best sources are the darkest.
    assert 'aria-label="Stance of 5 documents: 2 supports, 1 neutral, 2 refutes"' in html
    rects = re.findall(r'fill-opacity="([\d.]+)"[^>]*><title>(web-\d)', html)
    shade = {doc: float(opacity) for opacity, doc in rects}
    assert shade["web-1"] > shade["web-3"] > shade["web-5"]
    # The tree: one dot per claim, the sub-sub-claim indented twice.
    circles = re.findall(r'<circle cx="(\d+)"', html)
    assert circles == ["10", "28", "46", "28"]


async def test_no_requester_chat_or_origin_is_shown(client: Client, store: CheckStore) -> None:
    row = stored_check(store, full_report())
    running = await client()
    html = await (await running.get(f"/c/{row.id}")).text()
    body = await (await running.get(f"/c/{row.id}.json")).text()
    for secret in (row.requester, row.chat, "Alice", "@alice", "telegram"):
        assert secret not in html and secret not in body


def test_every_reply_language_has_a_tag() -> None:
    assert language_tag("") == "en" and language_tag("Hebrew") == "he"
    tags = [language_tag(name) for name in LANGUAGES]
    assert "en" not in tags and len(set(tags)) == len(LANGUAGES)
    assert all(re.fullmatch(r"[a-z]{2}", tag) for tag in tags)


# -- missing pages ---------------------------------------------------------------------------


async def test_unknown_and_malformed_ids_say_unknown(client: Client) -> None:
    running = await client()
    for path in ("/c/AAAAAAAAAAAAAAAA", "/c/short", "/c/..%2F..%2Fetc", "/c/AAAAAAAAAAAAAAAA.json"):
        response = await running.get(path)
        assert response.status == 404, path
        if path.endswith(".json"):
            assert await response.json() == {"error": "unknown"}
        else:
            assert 'data-kind="unknown"' in await response.text()
    assert (await running.get("/")).status == 404  # no listing


async def test_a_purged_check_says_it_was_deleted(client: Client, store: CheckStore) -> None:
    row = stored_check(store, full_report())
    store.purge(older_than=dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1))
    running = await client()
    response = await running.get(f"/c/{row.id}")
    assert response.status == 404
    html = await response.text()
    assert 'data-kind="purged"' in html and "deleted after 30 days" in html
    assert POST not in html
    json_response = await running.get(f"/c/{row.id}.json")
    assert json_response.status == 404 and await json_response.json() == {"error": "purged"}


async def test_unfinished_and_failed_checks_say_so(client: Client, store: CheckStore) -> None:
    running_check = stored_check(store, None, status="running")
    failed = stored_check(store, None, text="Another post entirely.", status="running")
    store.checks.set_status(
        failed.id, "failed", error="the judge's model failed at http://10.0.0.5"
    )
    running = await client()
    pending_page = await (await running.get(f"/c/{running_check.id}")).text()
    failed_page = await (await running.get(f"/c/{failed.id}")).text()
    assert 'data-kind="pending"' in pending_page
    assert 'data-kind="failed"' in failed_page and "10.0.0.5" not in failed_page


# -- JSON --------------------------------------------------------------------------------


async def test_the_json_route_gives_the_report(client: Client, store: CheckStore) -> None:
    report = full_report("misleading")
    row = stored_check(store, report)
    response = await (await client()).get(f"/c/{row.id}.json")
    assert response.status == 200 and response.content_type == "application/json"
    assert "X-Zofia-Trimmed" not in response.headers
    body = await response.text()
    served = Report.model_validate_json(body)
    assert served.verdict == "misleading" and served.claims == report.claims
    assert served.debate == report.debate and served.evidence == report.evidence
    assert "10.0.0.5" not in body and "192.168.1.20" not in body
    # A failed step's error is one fixed sentence (the details are in the log).
    assert served.usage.log[7].error == STEP_FAILED and "timed out" not in body
    assert served.images and all(i.sha256 == "" for i in served.images)  # no image lookups
    assert report.images[0].sha256 not in body


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        (
            "Cannot connect to host searxng:8080 ssl:default",
            "Cannot connect to host [address] ssl:default",
        ),
        ("vision.internal:8000 refused the image", "[address] refused the image"),
        ("connect to [fd00::1]:8080 failed", "connect to [address] failed"),
        ("from [::1], fe80::1%eth0 and 2001:db8::5", "from [address], [address] and [address]"),
        ("::ffff:10.0.0.1 answered 503", "[address] answered 503"),
        ("http://10.0.0.5:9200/x?key=1 and 192.168.1.20:5432", "[address] and [address]"),
        # What only looks like one stays: times, ratios, a backend's name.
        ("at 10:30:15 the ratio was 3:1", "at 10:30:15 the ratio was 3:1"),
        ("openai:gpt-4o-mini failed: HTTP 500", "openai:gpt-4o-mini failed: HTTP 500"),
    ],
)
def test_a_note_loses_every_address_of_the_deployment(said: str, shown: str) -> None:
    assert redact(said) == shown


async def test_an_images_notes_reach_the_json_without_addresses(
    client: Client, store: CheckStore
) -> None:
    report = full_report()
    image = report.images[0].model_copy(update={"notes": ["read from 10.0.0.9:8080"]})
    row = stored_check(store, report.model_copy(update={"images": [image]}))
    body = await (await (await client()).get(f"/c/{row.id}.json")).text()
    assert "10.0.0.9" not in body and "read from [address]" in body


def _bulky() -> Report:
    report = full_report()
    long_text = "The minutes say nothing of bicycles. " * 150  # about 5,500 characters
    return report.model_copy(
        update={
            "evidence": [item.model_copy(update={"text": long_text}) for item in report.evidence]
        }
    )


async def test_a_large_json_is_trimmed_then_refused(client: Client, store: CheckStore) -> None:
    row = stored_check(store, _bulky())
    whole = await (await (await client()).get(f"/c/{row.id}.json")).read()
    assert len(whole) > 40_000
    trimmed = await (await client(max_json_bytes=30_000)).get(f"/c/{row.id}.json")
    assert trimmed.status == 200
    assert trimmed.headers["X-Zofia-Trimmed"] == "usage.log, evidence.text"
    body = await trimmed.read()
    assert len(body) <= 30_000
    served = Report.model_validate_json(body)
    assert served.usage.log == [] and all(len(item.text) <= 1001 for item in served.evidence)
    refused = await (await client(max_json_bytes=10_000)).get(f"/c/{row.id}.json")
    assert refused.status == 413
    assert await refused.json() == {"error": "too_large", "page": f"/c/{row.id}"}


# -- headers, limits, health ---------------------------------------------------------------


async def test_every_response_has_the_security_headers(client: Client, store: CheckStore) -> None:
    row = stored_check(store, full_report())
    running = await client()
    html = await (await running.get(f"/c/{row.id}")).text()
    [style] = re.findall(r"<style>(.*?)</style>", html, re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    for path in (f"/c/{row.id}", f"/c/{row.id}.json", "/c/AAAAAAAAAAAAAAAA", "/healthz", "/x"):
        headers = (await running.get(path)).headers
        policy = headers["Content-Security-Policy"]
        assert policy.startswith("default-src 'none';"), path
        assert f"style-src 'sha256-{digest}'" in policy
        assert "script-src" not in policy and "unsafe" not in policy
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "no-referrer"
        assert headers["X-Frame-Options"] == "DENY"
        assert "aiohttp" not in headers.get("Server", "")
    # No inline style attribute anywhere (the policy would refuse it).
    assert not any("style" in attrs for _, attrs in Markup(html).tags)


async def test_each_address_gets_its_rate(client: Client, store: CheckStore) -> None:
    row = stored_check(store, full_report())
    running = await client(per_minute=3)
    statuses = [(await running.get(f"/c/{row.id}")).status for _ in range(3)]
    refused = await running.get(f"/c/{row.id}.json")
    assert statuses == [200, 200, 200] and refused.status == 429
    assert refused.headers["Retry-After"] == "20"
    # The health check has a budget of its own: pages cannot use it up, nor it theirs.
    health = [(await running.get("/healthz")).status for _ in range(4)]
    assert health == [200, 200, 200, 429]
    # The proxy's forwarded address counts only when the proxy is trusted to set it.
    other = {"X-Forwarded-For": "203.0.113.9"}
    assert (await running.get(f"/c/{row.id}", headers=other)).status == 429
    behind = await client(per_minute=3, forwarded_for=True)
    for address in ("203.0.113.9", "203.0.113.9", "203.0.113.9", "198.51.100.7"):
        answer = await behind.get(
            f"/c/{row.id}", headers={"X-Forwarded-For": f"1.2.3.4, {address}"}
        )
        assert answer.status == 200
    assert (await behind.get(f"/c/{row.id}", headers=other)).status == 429


async def test_health(client: Client, store: CheckStore) -> None:
    running = await client()
    response = await running.get("/healthz")
    assert response.status == 200 and await response.json() == {"status": "ok"}
    store.close()
    broken = await running.get("/healthz")
    assert broken.status == 503


# -- hostile strings -----------------------------------------------------------------------


async def test_hostile_strings_render_inert(client: Client, store: CheckStore) -> None:
    row = stored_check(store, hostile_report(), url="javascript:window.__xss='post'")
    html = await (await (await client()).get(f"/c/{row.id}")).text()
    page = Markup(html)
    assert [tag for tag, _ in page.tags if tag in ("script", "img", "iframe", "object")] == []
    handlers = [(tag, name) for tag, attrs in page.tags for name in attrs if name.startswith("on")]
    assert handlers == []
    assert not any("autofocus" in attrs for _, attrs in page.tags)
    for attrs in page.links():
        target = attrs["href"]
        assert target.startswith(("#", "/c/", "https://", "http://")), target
        if not target.startswith(("#", "/c/")):
            assert attrs["rel"] == "noopener nofollow ugc"
            assert "\u202e" not in target
    assert "javascript:" not in "".join(a["href"] for a in page.links())
    assert "gnp.exe" not in "".join(a["href"] for a in page.links())  # SPOOFED_URL
    assert "data:" not in "".join(a["href"] for a in page.links())
    # The attacks are shown as text, the override character taken out.
    text = "".join(page.text)
    assert '<script>window.__xss = "script"</script>' in text
    assert "\u202e" not in html and "\u202c" not in html
    assert RTL.replace("\u202e", "").replace("\u202c", "") in text


# -- the command and the bot's side task ---------------------------------------------------


def test_zofia_web_has_help() -> None:
    result = CliRunner().invoke(main, ["web", "--help"])
    assert result.exit_code == 0 and "/c/<check id>" in result.output


def test_public_url_must_be_http() -> None:
    for bad in ("javascript:alert(1)", "ftp://example.org", "https://example.org/?a=1", "x"):
        with pytest.raises(ConfigError, match=r"site\.public_url"):
            load_config(None, {"ZOFIA__SITE__PUBLIC_URL": f'"{bad}"'}, schema=Settings)
    assert SiteSettings(public_url="https://example.org/zofia/").public_url == (
        "https://example.org/zofia"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_bot_serves_the_pages_only_when_asked(store: CheckStore) -> None:
    row = stored_check(store, full_report())
    port = _free_port()
    async with aiohttp.ClientSession() as session:
        on = SiteSettings(with_bot=True, port=port)
        async with (
            site_beside_bot(ReportPages(store), on, retention_days=30),
            session.get(f"http://127.0.0.1:{port}/c/{row.id}") as response,
        ):
            assert response.status == 200
        async with site_beside_bot(ReportPages(store), SiteSettings(port=port), retention_days=30):
            with pytest.raises(aiohttp.ClientConnectionError):
                await session.get(f"http://127.0.0.1:{port}/c/{row.id}")


async def test_the_privacy_page_says_what_the_bots_say(client: Client) -> None:
    from bots.render.privacy import PRIVACY_TITLE, privacy_paragraphs

    running = await client()
    response = await running.get("/privacy")
    assert response.status == 200
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    page = Markup(await response.text())
    shown = " ".join(" ".join(page.text).split())
    assert PRIVACY_TITLE in shown
    for paragraph in privacy_paragraphs(30):  # the bots' own text, with the real retention
        assert paragraph in shown


@pytest.mark.parametrize(
    ("address", "bucket"),
    [
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("::ffff:203.0.113.9", "203.0.113.9"),
        ("203.0.113.9", "203.0.113.9"),
        ("unknown", "unknown"),
    ],
)
def test_an_ipv6_client_is_limited_by_its_64(address: str, bucket: str) -> None:
    assert client_bucket(address) == bucket


async def test_addresses_of_one_ipv6_network_share_a_rate(
    client: Client, store: CheckStore
) -> None:
    row = stored_check(store, full_report())
    behind = await client(per_minute=2, forwarded_for=True)
    statuses = [
        (await behind.get(f"/c/{row.id}", headers={"X-Forwarded-For": f"2001:db8:7:7::{n}"})).status
        for n in range(1, 4)
    ]
    assert statuses == [200, 200, 429]
    other = {"X-Forwarded-For": "2001:db8:7:8::1"}  # the next /64: another subscriber
    assert (await behind.get(f"/c/{row.id}", headers=other)).status == 200
