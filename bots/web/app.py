"""The report pages' server: aiohttp, over the store of checks (its reads:
:class:`~bots.service.pages.ReportPages`).

Routes: ``GET /c/<check id>`` (the page), ``GET /c/<check id>.json`` (the report),
``GET /healthz``. The check id is the only key: there is no listing and no search.
Every response carries the security headers; every route but the health check counts
against the client address's requests a minute. The store is read off the event loop
(on the service's threads): a lookup by primary key is quick, but the
store's lock may be held by a write that waits for PostgreSQL's, and one such wait on
the loop would stop every page (and, beside a bot, every chat) at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import signal
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

import psycopg
from aiohttp import web

from bots.render.links import report_url
from bots.service.records import CheckRow, Missing
from zofia_engine.report import Report

from .clients import ClientLimits, client_address, client_bucket
from .page import report_page
from .parts import STEP_FAILED, cut
from .render import CONTENT_SECURITY_POLICY, missing_html, privacy_html, report_html
from .safety import redact
from .settings import SiteSettings

__all__ = [
    "CHECK_ID",
    "build_app",
    "public_json",
    "serve_until_stopped",
    "serving_site",
    "site_beside_bot",
]

log = logging.getLogger(__name__)

#: what a check id looks like (``storage.keys.new_check_id``)
CHECK_ID = re.compile(r"[A-Za-z0-9_-]{16}")
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "interest-cohort=(), camera=(), microphone=(), geolocation=()",
    "X-Robots-Tag": "noindex, nofollow",
}
_TRIMMED_TEXT = 1000
# Access log lines without the client's address: the pages are public, their readers not.
ACCESS_LOG_FORMAT = '"%r" %s %b %Tf'


class ReportPages(Protocol):
    """What the pages read of the store (:class:`bots.service.pages.ReportPages`)."""

    async def page(self, check_id: str) -> tuple[CheckRow, Report] | Missing: ...

    async def ping(self) -> None: ...


_PAGES: web.AppKey[ReportPages] = web.AppKey("pages")
_SITE: web.AppKey[SiteSettings] = web.AppKey("site", SiteSettings)
_RETENTION: web.AppKey[int] = web.AppKey("retention_days", int)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def public_json(report: Report) -> dict[str, Any]:
    """The report as the JSON route sends it: every field, with a failed step's error
    replaced by one fixed sentence (its details are in the operator's log), the
    addresses of the deployment's backends taken out of the notes' words (a review in
    force is a field of its own, its link the reviewer's), and without the images'
    hashes (with one, anyone could confirm that a known image was sent)."""

    def scrub(value: Any, key: str = "") -> Any:
        if isinstance(value, dict) and key == "notes":  # a typed note: its words redacted
            return {**value, "text": redact(str(value.get("text", "")))}
        if isinstance(value, dict):
            return {k: scrub(v, k) for k, v in value.items() if k != "sha256"}
        if isinstance(value, list):
            return [scrub(v, key) for v in value]
        if isinstance(value, str) and key == "error":
            return STEP_FAILED if value else ""
        if isinstance(value, str) and key == "notes":  # an image's notes: words only
            return redact(value)
        return value

    scrubbed: dict[str, Any] = scrub(report.model_dump(mode="json"))
    return scrubbed


def _encode(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def _limit_middleware(limits: ClientLimits, site: SiteSettings) -> Any:
    retry = str(limits.retry_after_s)

    @web.middleware
    async def limit(request: web.Request, handler: Handler) -> web.StreamResponse:
        # The health check has its own budget per client, so a proxy's probes and the
        # pages it forwards never use up each other's.
        client = client_bucket(client_address(request, forwarded_for=site.forwarded_for))
        bucket = f"healthz {client}" if request.path == "/healthz" else client
        if not await limits.admit(bucket):
            return web.Response(
                status=429,
                text="Too many requests from your address; try again in a minute.\n",
                headers={"Retry-After": retry},
            )
        return await handler(request)

    return limit


async def _secure(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(SECURITY_HEADERS)
    response.headers["Server"] = "zofia"


def _timed(response: web.Response, started: float) -> web.Response:
    response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.2f}"
    return response


async def _check(request: web.Request) -> web.Response:
    started = time.perf_counter()
    name = request.match_info["name"]
    as_json = name.endswith(".json")
    check_id = name.removesuffix(".json") if as_json else name
    found = await request.app[_PAGES].page(check_id) if CHECK_ID.fullmatch(check_id) else "unknown"
    if isinstance(found, str):
        headers = {"Cache-Control": "no-store"}
        if as_json:
            return web.json_response({"error": found}, status=404, headers=headers)
        days = request.app[_RETENTION]
        page = missing_html(found, retention_days=days)
        return web.Response(status=404, text=page, content_type="text/html", headers=headers)
    row, report = found
    headers = {"Cache-Control": "private, max-age=300"}
    if not as_json:
        site = request.app[_SITE]
        url = report_url(site.public_url, row.id)
        html = report_html(report_page(row, report, publisher=site.publisher, url=url))
        response = web.Response(text=html, content_type="text/html", headers=headers)
        return _timed(response, started)
    cap = request.app[_SITE].max_json_bytes
    data = public_json(report)
    body = _encode(data)
    if len(body) > cap:
        data["usage"]["log"] = []
        for item in data["evidence"]:
            item["text"] = cut(item["text"], _TRIMMED_TEXT)
        body = _encode(data)
        headers["X-Zofia-Trimmed"] = "usage.log, evidence.text"
    if len(body) > cap:
        return web.json_response(
            {"error": "too_large", "page": f"/c/{row.id}"}, status=413, headers=headers
        )
    response = web.Response(body=body, content_type="application/json", headers=headers)
    return _timed(response, started)


async def _health(request: web.Request) -> web.Response:
    try:
        await request.app[_PAGES].ping()
    except (sqlite3.Error, psycopg.Error) as exc:
        log.warning("health check: the store is unreadable: %s", exc)
        return web.json_response({"status": "store unreadable"}, status=503)
    return web.json_response({"status": "ok"}, headers={"Cache-Control": "no-store"})


async def _privacy(request: web.Request) -> web.Response:
    page = privacy_html(retention_days=request.app[_RETENTION])
    headers = {"Cache-Control": "max-age=3600"}
    return web.Response(text=page, content_type="text/html", headers=headers)


async def _no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204, headers={"Cache-Control": "max-age=86400"})


def build_app(pages: ReportPages, site: SiteSettings, *, retention_days: int) -> web.Application:
    """The application serving the pages of the checks ``pages`` reads.

    Args:
        pages: the store's reads for the pages (:class:`~bots.service.pages.ReportPages`).
        site: the ``[site]`` section: the rate per client address, the JSON cap.
        retention_days: how long reports are kept, said on a purged check's page.
    """
    limits = ClientLimits(site.per_minute)
    app = web.Application(middlewares=[_limit_middleware(limits, site)])
    app[_PAGES] = pages
    app[_SITE] = site
    app[_RETENTION] = retention_days
    app.on_response_prepare.append(_secure)
    app.router.add_get("/c/{name}", _check)
    app.router.add_get("/healthz", _health)
    app.router.add_get("/privacy", _privacy)
    app.router.add_get("/favicon.ico", _no_icon)
    return app


@contextlib.asynccontextmanager
async def serving_site(
    pages: ReportPages, site: SiteSettings, *, retention_days: int, port: int | None = None
) -> AsyncIterator[web.AppRunner]:
    """The pages served on ``site.listen:site.port`` (or ``port``; ``0`` picks a free
    one, read from the runner's ``addresses``) until the block ends."""
    runner = web.AppRunner(
        build_app(pages, site, retention_days=retention_days),
        access_log_format=ACCESS_LOG_FORMAT,
        shutdown_timeout=5.0,
    )
    await runner.setup()
    try:
        await web.TCPSite(runner, site.listen, site.port if port is None else port).start()
        log.info("report pages on http://%s:%d", *runner.addresses[0][:2])
        yield runner
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def site_beside_bot(
    pages: ReportPages, site: SiteSettings, *, retention_days: int
) -> AsyncIterator[None]:
    """The pages served from a bot's own process while the block runs, when ``[site]
    with_bot`` is on; nothing otherwise."""
    if not site.with_bot:
        yield
        return
    async with serving_site(pages, site, retention_days=retention_days):
        yield


async def serve_until_stopped(pages: ReportPages, site: SiteSettings, retention_days: int) -> None:
    """Serve the pages until SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with serving_site(pages, site, retention_days=retention_days):
        await stop.wait()
