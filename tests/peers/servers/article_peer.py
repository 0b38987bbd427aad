"""A fake news site on 127.0.0.1 for the article fetcher.

Pages: a real-looking article with navigation, ads and footer (``/article``),
the same story as broken HTML (``/broken``), a script-only page with no text
(``/empty``), Latin-1 HTML declared only in ``<meta>`` (``/latin1``), plain text
(``/plain``), a PDF (``/pdf``), oversized pages with and without Content-Length
(``/big``, ``/big-stream``), one declaring a gigabyte in Content-Length and
then stalling (``/huge-declared``), a 404 (``/missing``), a redirect chain
(``/r/<n>`` → … → ``/article``), a redirect loop (``/loop``), a redirect to any
URL (``/to?url=…``) and an answer held back until the peer closes (``/slow``).
Every request's path is counted in :attr:`ArticlePeer.hits`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable

from aiohttp import web

from ..fixtures.images import headline
from .loopback import LoopbackServer

__all__ = ["ARTICLE_HTML", "BODY_SENTENCES", "PLAIN_TEXT", "ArticlePeer"]

BODY_SENTENCES = [
    "The city council of Springfield voted 7 to 2 on Tuesday to build 40 kilometres "
    "of protected bike lanes along the main commuter corridors by the end of 2026.",
    "Council member Ana Ruiz, who proposed the plan, said the lanes would cost "
    "about 18 million euros, most of it covered by a regional transport grant.",
    "Opponents argued that removing parking spaces on Harbour Street would hurt "
    "small shops, and asked for a traffic study before construction begins.",
    "The transport department expects the first segment, between the central "
    "station and the university campus, to open to cyclists next spring.",
]

NAV = "Home World Politics Sports Weather Subscribe now for unlimited access"
AD = "Buy cheap widgets today with free overnight shipping"
FOOTER = "Copyright 2024 Daily Example Media Group. All rights reserved. Privacy policy"

_PARAGRAPHS = "\n".join(f"<p>{s}</p>" for s in BODY_SENTENCES)

ARTICLE_HTML = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>City council approves new bike lanes | The Daily Example</title>
<meta property="og:title" content="City council approves new bike lanes">
<meta property="og:site_name" content="The Daily Example">
<meta property="article:published_time" content="2024-03-05T09:30:00Z">
<script>window.dataLayer = [{{"page": "article"}}];</script>
</head>
<body>
<header><nav class="main-nav"><ul>
{"".join(f'<li><a href="/{w.lower()}">{w}</a></li>' for w in NAV.split()[:5])}
<li><a href="/subscribe">{" ".join(NAV.split()[5:])}</a></li>
</ul></nav></header>
<div class="ad-banner advertisement" id="ad-top"><a href="/ads">{AD}</a></div>
<main>
<article>
<h1>City council approves new bike lanes</h1>
<p class="byline">By Jo Writer, <time datetime="2024-03-05">March 5, 2024</time></p>
{_PARAGRAPHS}
</article>
<aside class="sidebar"><h3>Most read</h3><ul>
<li><a href="/a1">Ten recipes for a rainy weekend</a></li>
<li><a href="/a2">Local team wins the regional cup</a></li>
</ul></aside>
</main>
<footer class="site-footer"><p>{FOOTER}</p></footer>
</body>
</html>
"""

BROKEN_HTML = f"""<html><head><title>Bike lanes approved</title>
<meta name=description content=bike lanes>
<body><div class=content><h1>City council approves new bike lanes</h2>
<div><p>{BODY_SENTENCES[0]}<p>{BODY_SENTENCES[1]}</span>
<p><b>{BODY_SENTENCES[2]}<p><i>{BODY_SENTENCES[3]}
<div><a href="/more>Read more
"""

EMPTY_HTML = """<!DOCTYPE html><html><head><title>Daily Example</title>
<script src="/static/app.js"></script></head><body><div id="root"></div></body></html>"""

LATIN1_HTML = (
    '<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
    "<title>Caf\u00e9 opens</title></head><body><article><h1>Caf\u00e9 opens in Z\u00fcrich</h1>"
    + "".join(
        f"<p>The new caf\u00e9 near the Z\u00fcrich station serves cr\u00e8me br\u00fbl\u00e9e. "
        f"{s}</p>"
        for s in BODY_SENTENCES
    )
    + "</article></body></html>"
).encode("latin-1")

IMAGE_LINES = ["Springfield bans bicycles", "from every street"]
IMAGE = headline(IMAGE_LINES, size=(900, 500))
PLAIN_TEXT = "Breaking: the council approved bike lanes. \u00a1Ol\u00e9! \u2014 the editors\n"

_BIG_PARAGRAPH = "".join(f"<p>{s}</p>" for s in BODY_SENTENCES)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ArticlePeer(LoopbackServer):
    """The fake news site; see the module docstring for its pages."""

    def __init__(self, big_bytes: int = 200_000) -> None:
        super().__init__()
        self.big_bytes = big_bytes
        self.hits: Counter[str] = Counter()

    def add_routes(self, app: web.Application) -> None:
        @web.middleware
        async def count(request: web.Request, handler: Handler) -> web.StreamResponse:
            self.hits[request.path] += 1
            return await handler(request)

        app.middlewares.append(count)
        html = "text/html"
        app.router.add_get("/article", self._page(ARTICLE_HTML, f"{html}; charset=utf-8"))
        app.router.add_get("/broken", self._page(BROKEN_HTML, html))
        app.router.add_get("/empty", self._page(EMPTY_HTML, html))
        app.router.add_get("/latin1", self._page(LATIN1_HTML, html))
        app.router.add_get("/plain", self._page(PLAIN_TEXT, "text/plain; charset=utf-8"))
        app.router.add_get("/pdf", self._page(b"%PDF-1.7\n%\xe2\xe3\n", "application/pdf"))
        app.router.add_get("/image.png", self._page(IMAGE, "image/png"))
        big = "<html><body><article>" + _BIG_PARAGRAPH * (self.big_bytes // len(_BIG_PARAGRAPH))
        app.router.add_get("/big", self._page(big + "</article></body></html>", html))
        app.router.add_get("/big-stream", self._big_stream)
        app.router.add_get("/huge-declared", self._huge_declared)
        app.router.add_get("/r/{n}", self._chain)
        app.router.add_get("/loop", self._loop)
        app.router.add_get("/to", self._to)
        app.router.add_get("/slow", self._slow)

    @staticmethod
    def _page(body: str | bytes, content_type: str) -> Handler:
        data = body.encode() if isinstance(body, str) else body

        async def handler(request: web.Request) -> web.StreamResponse:
            return web.Response(body=data, headers={"Content-Type": content_type})

        return handler

    async def _big_stream(self, request: web.Request) -> web.StreamResponse:
        """Chunked, no Content-Length: only counting while streaming can stop it."""
        resp = web.StreamResponse(headers={"Content-Type": "text/html"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        chunk = _BIG_PARAGRAPH.encode() * 20
        for _ in range(self.big_bytes // len(chunk) + 1):
            await resp.write(chunk)
        await resp.write_eof()
        return resp

    async def _huge_declared(self, request: web.Request) -> web.StreamResponse:
        """Declares a gigabyte, sends a few bytes, then holds on: only the header can refuse it."""
        resp = web.StreamResponse(headers={"Content-Type": "text/html"})
        resp.content_length = 1_000_000_000
        await resp.prepare(request)
        await resp.write(b"<html><body>")
        await self.release.wait()
        return resp

    async def _chain(self, request: web.Request) -> web.StreamResponse:
        n = int(request.match_info["n"])
        # Relative and absolute Locations alternate; the last hop is a 301.
        if n <= 0:
            raise web.HTTPMovedPermanently(f"{self.root}/article")
        raise web.HTTPFound(f"/r/{n - 1}" if n % 2 else f"{self.root}/r/{n - 1}")

    async def _loop(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPTemporaryRedirect("/loop")

    async def _to(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound(request.query["url"])

    async def _slow(self, request: web.Request) -> web.StreamResponse:
        await self.release.wait()
        return web.Response(text="<p>too late</p>", content_type="text/html")
