"""Fake Brave Search and SearXNG servers that speak the real HTTP protocols.

Each server is an ``aiohttp.web`` application on 127.0.0.1 with an ephemeral
port. It checks requests the way the real service does (Brave's subscription
token and parameter limits, SearXNG's ``format=json``), records every request
it receives, and answers from a per-test script: one-shot replies queued with
:meth:`ScriptedServer.script`, then the standing reply set with
:meth:`ScriptedServer.respond`.

The ``brave_server`` and ``searxng_server`` fixtures live in
:mod:`tests.peers.fixtures.search_fixtures`; load them with
``pytest_plugins = ["tests.peers.fixtures.search_fixtures"]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy, MultiDict

from .loopback import LoopbackServer

__all__ = [
    "BRAVE_TOKEN",
    "FakeBrave",
    "FakeSearxng",
    "RecordedRequest",
    "Reply",
    "ScriptedServer",
    "brave_body",
    "brave_error",
    "brave_rate_limited",
    "brave_result",
    "closed_port",
    "searxng_body",
    "searxng_result",
]

BRAVE_TOKEN = "test-subscription-token"
_OMIT: Any = object()


@dataclass(frozen=True)
class Reply:
    """One scripted answer.

    ``body`` is sent as JSON unless ``raw`` is given, which is sent byte for byte
    (for truncated or non-JSON bodies). ``delay_s`` holds the answer back, for
    client timeouts; closing the server releases held answers at once.
    """

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    content_type: str = "application/json"


@dataclass(frozen=True)
class RecordedRequest:
    """What the server saw: method, path, query parameters and headers."""

    method: str
    path: str
    query: MultiDict[str]
    headers: CIMultiDictProxy[str]

    @property
    def params(self) -> dict[str, str]:
        """The query parameters as a plain dict (last value wins)."""
        return dict(self.query.items())


class ScriptedServer(LoopbackServer):
    """An aiohttp server on 127.0.0.1 that answers GETs on ``path`` from a script."""

    path = "/"

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[RecordedRequest] = []
        self._script: deque[Reply] = deque()
        self._standing = Reply(body={})
        self._when: list[tuple[Callable[[Mapping[str, str]], bool], Reply]] = []

    def respond(self, reply: Reply | Any) -> None:
        """Set the standing answer, given after the script runs out (a body means 200)."""
        self._standing = reply if isinstance(reply, Reply) else Reply(body=reply)

    def respond_when(
        self, matches: Callable[[Mapping[str, str]], bool], reply: Reply | Any
    ) -> None:
        """Answer requests whose parameters ``matches`` with ``reply`` (the first rule
        that matches wins, before the script and the standing answer)."""
        self._when.append((matches, reply if isinstance(reply, Reply) else Reply(body=reply)))

    def script(self, *replies: Reply) -> None:
        """Queue one-shot answers, given in order before the standing one."""
        self._script.extend(replies)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_route("*", self.path, self._handle)

    def check(self, request: web.Request) -> Reply | None:
        """A reply that refuses ``request`` as the real service would, or ``None``."""
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(
            RecordedRequest(
                method=request.method,
                path=request.path,
                query=MultiDict(request.query),
                headers=CIMultiDictProxy(CIMultiDict(request.headers)),
            )
        )
        refusal = self.check(request)
        ruled = next((r for matches, r in self._when if matches(request.query)), None)
        if refusal is not None:
            reply = refusal
        elif ruled is not None:
            reply = ruled
        elif self._script:
            reply = self._script.popleft()
        else:
            reply = self._standing
        if reply.delay_s > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.release.wait(), reply.delay_s)
        raw = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
        return web.Response(
            status=reply.status,
            body=raw,
            headers=dict(reply.headers),
            content_type=reply.content_type,
        )


# --------------------------------------------------------------------------- Brave


def brave_result(
    url: str,
    title: str = "A page",
    description: str = "A description.",
    *,
    page_age: str | None = None,
    age: str | None = None,
    extra_snippets: list[str] | None = None,
) -> dict[str, Any]:
    """One entry of Brave's ``web.results``, with the fields the real API sends."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    item: dict[str, Any] = {
        "type": "search_result",
        "subtype": "generic",
        "title": title,
        "url": url,
        "description": description,
        "is_source_local": False,
        "is_source_both": False,
        "language": "en",
        "family_friendly": True,
        "profile": {"name": host, "url": url, "long_name": host, "img": ""},
        "meta_url": {
            "scheme": "https",
            "netloc": host,
            "hostname": host,
            "favicon": "",
            "path": "› " + parts.path.strip("/").replace("/", " › "),
        },
    }
    if page_age is not None:
        item["page_age"] = page_age
    if age is not None:
        item["age"] = age
    if extra_snippets is not None:
        item["extra_snippets"] = extra_snippets
    return item


def brave_body(results: list[dict[str, Any]], query: str = "") -> dict[str, Any]:
    """A Brave Web Search response; the ``web`` section is left out when empty."""
    body: dict[str, Any] = {
        "type": "search",
        "query": {
            "original": query,
            "show_strict_warning": False,
            "is_navigational": False,
            "is_news_breaking": False,
            "spellcheck_off": True,
            "country": "us",
            "bad_results": False,
            "should_fallback": False,
            "postal_code": "",
            "city": "",
            "header_country": "",
            "more_results_available": False,
            "state": "",
        },
        "mixed": {
            "type": "mixed",
            "main": [{"type": "web", "index": i, "all": False} for i in range(len(results))],
            "top": [],
            "side": [],
        },
    }
    if results:
        body["web"] = {"type": "search", "results": results, "family_friendly": True}
    return body


def brave_error(status: int, code: str, detail: str, **meta: Any) -> dict[str, Any]:
    """Brave's error body (``type: ErrorResponse``)."""
    error: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "status": status,
        "code": code,
        "detail": detail,
    }
    if meta:
        error["meta"] = meta
    return {"type": "ErrorResponse", "error": error, "time": int(time.time())}


def brave_rate_limited(
    retry_after: str | None = None, remaining: str = "0, 14000", reset: str = "0, 1000000"
) -> Reply:
    """Brave's 429: its per-window rate-limit headers, plus ``Retry-After`` when given.

    The defaults are the per-second window spent and resetting now, the monthly
    quota not spent.
    """
    headers = {
        "X-RateLimit-Limit": "1, 15000",
        "X-RateLimit-Policy": "1;w=1, 15000;w=2592000",
        "X-RateLimit-Remaining": remaining,
        "X-RateLimit-Reset": reset,
    }
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    body = brave_error(429, "RATE_LIMITED", "Request rate limit exceeded for plan.")
    return Reply(status=429, body=body, headers=headers)


_FRESHNESS = re.compile(r"^(pd|pw|pm|py|\d{4}-\d{2}-\d{2}to\d{4}-\d{2}-\d{2})$")


class FakeBrave(ScriptedServer):
    """Brave's ``/res/v1/web/search``: token checked, parameters validated (422)."""

    path = "/res/v1/web/search"

    def __init__(self, token: str = BRAVE_TOKEN) -> None:
        super().__init__()
        self.token = token
        self.respond(brave_body([]))

    @property
    def base_url(self) -> str:
        """The API root a client is configured with (``.../res/v1``)."""
        return self.root + "/res/v1"

    def check(self, request: web.Request) -> Reply | None:
        """Refuse a bad token (401) or an invalid parameter (422), as Brave does."""
        if request.headers.get("X-Subscription-Token") != self.token:
            body = brave_error(
                401,
                "SUBSCRIPTION_TOKEN_INVALID",
                "The provided subscription token is invalid.",
            )
            return Reply(status=401, body=body)
        problems = _brave_validation(request.query)
        if problems:
            body = brave_error(
                422,
                "VALIDATION",
                "Unable to validate request parameter(s)",
                errors=problems,
            )
            return Reply(status=422, body=body)
        return None


def _brave_validation(query: Mapping[str, str]) -> list[dict[str, Any]]:
    problems: list[dict[str, Any]] = []

    def bad(loc: str, msg: str) -> None:
        problems.append({"type": "value_error", "loc": ["query", loc], "msg": msg})

    q = query.get("q", "")
    if not q.strip():
        bad("q", "Field required")
    elif len(q) > 400 or len(q.split()) > 50:
        bad("q", "Query too long")
    count = query.get("count", "20")
    if not count.isdigit() or not 1 <= int(count) <= 20:
        bad("count", "Input should be between 1 and 20")
    if "freshness" in query and not _FRESHNESS.match(query["freshness"]):
        bad("freshness", "Invalid freshness")
    if query.get("safesearch", "moderate") not in {"off", "moderate", "strict"}:
        bad("safesearch", "Input should be 'off', 'moderate' or 'strict'")
    return problems


# ------------------------------------------------------------------------- SearXNG


def searxng_result(
    url: str,
    title: str = "A page",
    content: str = "Some content.",
    *,
    published: str | None = _OMIT,
    engine: str = "duckduckgo",
    category: str = "general",
) -> dict[str, Any]:
    """One entry of SearXNG's ``results``; ``published`` may be a string, ``None``
    (sent as ``null``) or left out (the key is absent)."""
    parts = urlsplit(url)
    item: dict[str, Any] = {
        "url": url,
        "title": title,
        "content": content,
        "engine": engine,
        "template": "default.html",
        "parsed_url": [parts.scheme, parts.netloc, parts.path, "", parts.query, ""],
        "img_src": "",
        "thumbnail": "",
        "priority": "",
        "engines": [engine],
        "positions": [1],
        "score": 1.0,
        "category": category,
    }
    if published is not _OMIT:
        item["publishedDate"] = published
    return item


def searxng_body(
    results: list[dict[str, Any]],
    query: str = "",
    unresponsive: list[list[str]] | None = None,
) -> dict[str, Any]:
    """A SearXNG ``format=json`` response."""
    return {
        "query": query,
        "number_of_results": 0,
        "results": results,
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": unresponsive or [],
    }


class FakeSearxng(ScriptedServer):
    """A SearXNG instance's ``/search``: ``format=json`` must be enabled (else 403)."""

    path = "/search"

    def __init__(self, json_enabled: bool = True) -> None:
        super().__init__()
        self.json_enabled = json_enabled
        self.respond(searxng_body([]))

    @property
    def base_url(self) -> str:
        """The instance root a client is configured with."""
        return self.root

    def check(self, request: web.Request) -> Reply | None:
        """Refuse as SearXNG does: HTML without ``format``, 403 for a disabled
        format, 400 for a missing query."""
        fmt = request.query.get("format", "html")
        if fmt == "html":
            page = b"<!DOCTYPE html><html><body>SearXNG</body></html>"
            return Reply(raw=page, content_type="text/html")
        if fmt != "json" or not self.json_enabled:
            page = b"<!doctype html><title>403 Forbidden</title><h1>Forbidden</h1>"
            return Reply(status=403, raw=page, content_type="text/html")
        if not request.query.get("q", "").strip():
            return Reply(status=400, body={"error": "search error"})
        return None


# ------------------------------------------------------------------------ fixtures


def closed_port() -> int:
    """A local port that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
