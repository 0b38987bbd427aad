"""A fake MediaWiki Action API (``/w/api.php``) on 127.0.0.1.

It answers ``action=query&generator=search`` with ``formatversion=2`` the way
Wikipedia does: pages as a list ordered by page id (not by rank), each with its
search ``index``, ``extract``, ``description``, ``pageprops.disambiguation`` on
disambiguation pages, and ``fullurl``; no ``query`` key when nothing is found.
Parameters it needs are checked and refused with MediaWiki's own error body
(``{"error": {"code": "badvalue", ...}}``, HTTP 200), and requests without a
proper User-Agent get Wikimedia's 403.

Search is plain word matching over a small built-in corpus: every word of the
query must occur in the title or extract; titles that contain more query words
rank first, then shorter titles.

Faults are scripted per test with :meth:`MediaWikiPeer.script` (one-shot
answers, in order) and :meth:`MediaWikiPeer.always` (a standing fault). Every
request is recorded in :attr:`MediaWikiPeer.requests`.

Start it with :meth:`MediaWikiPeer.start` and stop it with
:meth:`MediaWikiPeer.close` (the tests wrap that in a fixture);
:func:`refused_port_url` gives an endpoint where nothing listens.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from aiohttp import web

from .loopback import LoopbackServer

__all__ = [
    "CORPUS",
    "Fault",
    "MediaWikiPeer",
    "PeerPage",
    "PeerRequest",
    "refused_port_url",
]

API_PATH = "/w/api.php"
DOCREF = "See https://en.wikipedia.org/w/api.php for API usage."
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class PeerPage:
    """One article of the fake wiki."""

    pageid: int
    title: str
    extract: str
    description: str | None = None
    disambiguation: bool = False

    @property
    def fullurl(self) -> str:
        """The canonical URL, as Wikipedia writes it."""
        return "https://en.wikipedia.org/wiki/" + quote(self.title.replace(" ", "_"), safe="()_,.")


# Page ids are chosen so that id order (the order formatversion=2 lists pages in)
# differs from search rank.
CORPUS: tuple[PeerPage, ...] = (
    PeerPage(20, "Apple", "An apple is the round, edible fruit of an apple tree.", "Edible fruit"),
    PeerPage(
        3,
        "Apple Inc.",
        "Apple Inc. is an American multinational technology company.",
        "American multinational technology company",
    ),
    PeerPage(2, "Apple Daily", ""),  # an article with no intro text
    PeerPage(1, "Apple Records", "Apple Records is a record label founded by the Beatles."),
    PeerPage(
        77,
        "Apple (disambiguation)",
        "Apple most commonly refers to the fruit. Apple may also refer to:",
        "Topics referred to by the same term",
        disambiguation=True,
    ),
    PeerPage(
        101,
        "Mercury",
        "Mercury commonly refers to: Mercury (planet), Mercury (element).",
        "Topics referred to by the same term",
        disambiguation=True,
    ),
    PeerPage(
        12,
        "Mercury (planet)",
        "Mercury is the first planet from the Sun.",
        "First planet from the Sun",
    ),
    PeerPage(
        5,
        "Mercury (element)",
        "Mercury is a chemical element; it has symbol Hg and atomic number 80.",
        "Chemical element with atomic number 80 (Hg)",
    ),
    PeerPage(
        57,
        "Freddie Mercury",
        "Freddie Mercury was a British singer and songwriter, lead vocalist of Queen.",
        "British singer (1946–1991)",
    ),
    PeerPage(
        33, "Zürich", "Zürich is the largest city in Switzerland.", "Largest city in Switzerland"
    ),
)


@dataclass(frozen=True)
class Fault:
    """A scripted answer that replaces the normal one.

    ``status`` and ``headers`` go out as given; the body is ``raw`` bytes if set,
    else ``body`` as JSON. ``delay_s`` holds the answer back (for client
    timeouts); closing the peer releases held answers at once.
    """

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    @classmethod
    def rate_limited(cls, retry_after: str | None = None) -> Fault:
        """HTTP 429, with ``Retry-After`` when given."""
        headers = {} if retry_after is None else {"Retry-After": retry_after}
        return cls(status=429, raw=b"Too many requests", headers=headers)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        """An HTTP 5xx with an HTML page, as Wikimedia's edge sends."""
        return cls(status=status, raw=b"<html><body>Wikimedia Error</body></html>")

    @classmethod
    def slow(cls, delay_s: float) -> Fault:
        """A valid-looking answer that comes ``delay_s`` seconds late."""
        return cls(body={"batchcomplete": True}, delay_s=delay_s)

    @classmethod
    def api_error(cls, code: str, info: str) -> Fault:
        """MediaWiki's error body, with HTTP 200 and the ``MediaWiki-API-Error`` header."""
        return cls(body=_error_body(code, info), headers={"MediaWiki-API-Error": code})


@dataclass(frozen=True)
class PeerRequest:
    """What the peer saw."""

    method: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]

    @property
    def user_agent(self) -> str:
        """The ``User-Agent`` header, or ``""``."""
        return self.headers.get("User-Agent", "")


def _error_body(code: str, info: str) -> dict[str, Any]:
    return {"error": {"code": code, "info": info, "docref": DOCREF}, "servedby": "mw-peer"}


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _validate(params: Mapping[str, str]) -> tuple[str, str] | None:
    """The first problem with ``params`` as (code, info), as MediaWiki words it."""
    expected = {
        "action": "query",
        "format": "json",
        "formatversion": "2",
        "generator": "search",
        "gsrnamespace": "0",
    }
    for name, value in expected.items():
        if name not in params:
            return "missingparam", f'The "{name}" parameter must be set.'
        if params[name] != value:
            return "badvalue", f'Unrecognized value for parameter "{name}": {params[name]}.'
    if not params.get("gsrsearch", "").strip():
        return "missingparam", 'The "gsrsearch" parameter must be set.'
    limit = params.get("gsrlimit", "10")
    if not limit.isdigit() or not 1 <= int(limit) <= 500:
        return "badinteger", f'Invalid value "{limit}" for integer parameter "gsrlimit".'
    for name, needed in (
        ("prop", {"extracts", "description", "pageprops", "info"}),
        ("ppprop", {"disambiguation"}),
        ("inprop", {"url"}),
    ):
        missing = needed - set(params.get(name, "").split("|"))
        if missing:
            return "badvalue", f'Parameter "{name}" lacks: {", ".join(sorted(missing))}.'
    for flag in ("exintro", "explaintext"):  # MediaWiki booleans: present means true
        if flag not in params:
            return "badvalue", f'This peer only serves plain intro extracts; set "{flag}".'
    return None


class MediaWikiPeer(LoopbackServer):
    """The fake API server. ``url`` is the ``api.php`` endpoint to configure.

    Args:
        pages: the wiki's articles.
    """

    def __init__(self, pages: tuple[PeerPage, ...] = CORPUS) -> None:
        super().__init__()
        self.pages = pages
        self.requests: list[PeerRequest] = []
        self.responses: list[Any] = []  # the normal JSON bodies sent, in order
        self._script: deque[Fault] = deque()
        self._standing: Fault | None = None

    @property
    def url(self) -> str:
        """The API endpoint, ``.../w/api.php``."""
        return self.root + API_PATH

    def script(self, *faults: Fault, times: int = 1) -> None:
        """Queue one-shot faults (each ``times`` times), answered before normal service."""
        for fault in faults:
            self._script.extend([fault] * times)

    def always(self, fault: Fault | None) -> None:
        """Answer every request after the script with ``fault`` (``None``: serve normally)."""
        self._standing = fault

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get(API_PATH, self._handle)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        params = dict(request.query)
        self.requests.append(
            PeerRequest(request.method, request.path, params, dict(request.headers))
        )
        fault = self._script.popleft() if self._script else self._standing
        if fault is not None:
            return await self._fault(fault)
        agent = request.headers.get("User-Agent", "")
        if not agent or agent.startswith(("Python/", "python-requests/")):
            text = "Please set a user-agent and respect our robot policy."
            return web.Response(status=403, text=text)
        if params.get("meta") == "siteinfo" and params.get("siprop") == "statistics":
            return web.json_response(
                {"batchcomplete": True, "query": {"statistics": {"articles": len(self.pages)}}}
            )
        problem = _validate(params)
        if problem is not None:
            code, info = problem
            return web.json_response(_error_body(code, info), headers={"MediaWiki-API-Error": code})
        body = self._search(params["gsrsearch"], int(params.get("gsrlimit", "10")))
        self.responses.append(body)
        return web.json_response(body)

    async def _fault(self, fault: Fault) -> web.StreamResponse:
        if fault.delay_s > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.release.wait(), fault.delay_s)
        raw = fault.raw if fault.raw is not None else json.dumps(fault.body).encode()
        content_type = "application/json" if fault.raw is None else "text/html"
        return web.Response(
            status=fault.status, body=raw, headers=dict(fault.headers), content_type=content_type
        )

    def _search(self, text: str, limit: int) -> dict[str, Any]:
        wanted = set(_words(text))
        scored = []
        for page in self.pages:
            title_words = set(_words(page.title))
            if wanted <= title_words | set(_words(page.extract)):
                scored.append((-len(wanted & title_words), len(page.title), page.pageid, page))
        hits = [page for *_, page in sorted(scored)][:limit]
        if not hits:
            return {"batchcomplete": True}
        listed = sorted(enumerate(hits, start=1), key=lambda item: item[1].pageid)
        return {"batchcomplete": True, "query": {"pages": [_page_json(p, i) for i, p in listed]}}


def _page_json(page: PeerPage, index: int) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pageid": page.pageid,
        "ns": 0,
        "title": page.title,
        "index": index,
        "contentmodel": "wikitext",
        "pagelanguage": "en",
        "touched": "2024-05-01T12:00:00Z",
        "lastrevid": page.pageid * 1000,
        "length": 1000 + len(page.extract),
        "fullurl": page.fullurl,
        "editurl": page.fullurl.replace("/wiki/", "/w/index.php?title=") + "&action=edit",
        "canonicalurl": page.fullurl,
        "extract": page.extract,
    }
    if page.description is not None:
        item["description"] = page.description
        item["descriptionsource"] = "local"
    if page.disambiguation:
        item["pageprops"] = {"disambiguation": ""}
    return item


def refused_port_url() -> str:
    """An ``api.php`` URL on a 127.0.0.1 port where nothing listens (just freed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}{API_PATH}"
