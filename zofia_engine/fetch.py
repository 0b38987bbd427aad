"""Fetch a news article from a URL so its text can be checked.

Guarded against server-side request forgery: every connection, redirect hops
included, goes to public addresses only. Host names are checked in the resolver
aiohttp connects with (so DNS rebinding cannot slip past a check); IP literals,
which aiohttp does not resolve, before each hop. trafilatura extracts the text.

A link refused for where it points (a private or local address, a name that does not
resolve, a connection that fails or does not answer in time) gets one sentence,
whichever it was ("… could not be fetched."): told apart, they would let anyone map
the deployment's internal host names and ports through the bot. Which it was goes to
the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import logging
import re
import socket
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from .bounded_work import KillablePool, WorkTimeoutError
from .errors import InvalidPostError, ModelUnavailableError
from .image_settings import ImageSettings
from .post import MAX_POST_CHARS, Post, PostImage, cut_at_word
from .records.images import ACCEPTED
from .refusals import POST_REFUSALS, PostRefusal

__all__ = ["UNREACHABLE", "FetchedArticle", "GuardedResolver", "fetch_article", "refusal_kind"]

log = logging.getLogger(__name__)

#: The most page text trafilatura is given (about 2 MB of HTML, far above an article's),
#: and the time its extraction may take: together they bound the work one link causes.
MAX_HTML_CHARS = 2_000_000
EXTRACT_TIMEOUT_S = 20.0
#: Extraction runs in worker processes of its own (killed past EXTRACT_TIMEOUT_S, each
#: under 1 GB), two at a time, eight more waiting; past that a link is refused at once.
EXTRACTION = KillablePool(
    workers=2,
    waiting=8,
    busy=PostRefusal.LINKS_BUSY,
    too_slow="The page is too complex to read.",
    max_memory=1 << 30,
)

_CONTENT_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain"})
#: A link straight to an image is an image post; the reader decodes it within its caps.
_IMAGE_TYPES = frozenset(ACCEPTED.values())
MAX_IMAGE_BYTES = ImageSettings().max_bytes
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: what the sender of a link is told of every refusal for where it points
UNREACHABLE = POST_REFUSALS[PostRefusal.UNREACHABLE]
#: how the fetcher names itself to the sites it reads
USER_AGENT = "zofia-factcheck/0.1"
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


@dataclass(frozen=True)
class FetchedArticle:
    """An article as fetched: ``final_url`` is where the redirects ended."""

    url: str
    final_url: str
    title: str
    text: str
    published: datetime.date | None
    site: str
    image: bytes = b""
    media_type: str = ""

    def as_post(
        self, *, published: datetime.date | None = None, origin: str = "", language: str = ""
    ) -> Post:
        """The article as a post: its title over its text; ``published`` overrides its own
        date. A link to an image is a post of that image (its text is read later)."""
        body = f"{self.title}\n\n{self.text}" if self.title else self.text
        return Post(
            text=body,
            url=self.final_url,
            published=published or self.published,
            origin=origin,
            language=language,
            images=(PostImage(data=self.image, media_type=self.media_type),) if self.image else (),
        )


def _address_kind(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why ``ip`` may not be fetched (``"loopback"``, ``"private"``, …); ``None`` if public."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None:
            kind = _address_kind(embedded)
            return None if kind is None else f"IPv4-embedded {kind}"
    for kind in ("unspecified", "loopback", "link_local", "multicast", "private", "reserved"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    return None if ip.is_global else "non-public"


def refusal_kind(ip: str) -> str | None:
    """Why the address ``ip`` (text) may not be fetched (``"loopback"``, ``"private"``,
    ``"not an IP address"``, …); ``None`` when it is a globally routable unicast address.
    The guard's one table: the resolver's and the IP literals' checks both ask it."""
    try:
        return _address_kind(ipaddress.ip_address(ip))
    except ValueError:
        return "not an IP address"


def _literal_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address an IP-literal host names, legacy forms (``127.1``, ``2130706433``) included."""
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host.strip("[]"))
    with contextlib.suppress(OSError):
        return ipaddress.IPv4Address(socket.inet_aton(host))
    return None


def _unreachable(asked: object, why: str) -> InvalidPostError:
    """The one refusal of a link for where it points (:data:`UNREACHABLE`, naming the
    link as it was ``asked``); ``why`` goes to the log."""
    log.info("fetching %s refused: %s", asked, why)
    return InvalidPostError(PostRefusal.UNREACHABLE, url=str(asked))


def _check_target(url: URL, allow_private: bool, asked: URL) -> None:
    """Refuse a URL (a hop on the way to ``asked``) before any connection: bad scheme, or
    a local name or IP literal."""
    if url.scheme not in ("http", "https"):
        raise InvalidPostError(PostRefusal.NOT_WEB, url=str(url))
    host = (url.host or "").rstrip(".").lower()
    address = _literal_address(host)
    kind = refusal_kind(str(address)) if address else None
    if host == "localhost" or host.endswith(".localhost"):
        kind = "loopback"
    if kind and not allow_private:
        raise _unreachable(asked, f"{url} is a {kind} address")


class _RefusedAddressError(OSError):
    """No allowed address; ``args[0]`` says why (aiohttp wraps it in ClientConnectorDNSError)."""


class GuardedResolver(AbstractResolver):
    """Wraps an aiohttp resolver and drops the addresses :func:`refusal_kind` refuses;
    raises :class:`OSError` (saying why) when none is left. Connections made through it
    go to public addresses only, whatever a name resolves to by the time it is used."""

    def __init__(self, inner: AbstractResolver) -> None:
        self._inner = inner

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        kinds = [refusal_kind(r["host"]) for r in results]
        allowed = [r for r, kind in zip(results, kinds, strict=True) if kind is None]
        if not allowed:
            raise _RefusedAddressError(next((k for k in kinds if k), "no address"))
        return allowed

    async def close(self) -> None:
        await self._inner.close()


async def _read_capped(resp: aiohttp.ClientResponse, max_bytes: int, url: URL) -> bytes:
    """The body, streamed; refused as soon as it is known to exceed ``max_bytes``."""
    too_large = InvalidPostError(PostRefusal.PAGE_TOO_LARGE, url=str(url), max_bytes=max_bytes)
    if (resp.content_length or 0) > max_bytes:
        raise too_large
    body = bytearray()
    async for chunk in resp.content.iter_chunked(65536):
        body += chunk
        if len(body) > max_bytes:
            raise too_large
    return bytes(body)


async def _download(
    url: URL, allow_private: bool, max_bytes: int, max_redirects: int, headers: dict[str, str]
) -> tuple[URL, bytes, str, str | None]:
    """Follow redirects by hand, checking each hop; return final URL, body, type, charset."""
    inner = aiohttp.ThreadedResolver()
    resolver: AbstractResolver = inner if allow_private else GuardedResolver(inner)
    connector = aiohttp.TCPConnector(resolver=resolver, use_dns_cache=False)
    current = url
    try:
        async with aiohttp.ClientSession(connector=connector, headers=headers) as session:
            for _ in range(max_redirects + 1):
                _check_target(current, allow_private, url)
                async with session.get(current, allow_redirects=False) as resp:
                    if resp.status in _REDIRECTS and (location := resp.headers.get("Location")):
                        current = current.join(URL(location))
                        continue
                    if resp.status >= 300:
                        raise InvalidPostError(
                            PostRefusal.ERROR_STATUS,
                            url=str(current),
                            status=resp.status,
                            reason=resp.reason or "",
                        )
                    ctype = resp.content_type if "Content-Type" in resp.headers else "text/html"
                    if ctype not in _CONTENT_TYPES | _IMAGE_TYPES:
                        raise InvalidPostError(
                            PostRefusal.NOT_A_PAGE, url=str(current), content_type=ctype
                        )
                    cap = MAX_IMAGE_BYTES if ctype in _IMAGE_TYPES else max_bytes
                    body = await _read_capped(resp, cap, current)
                    return current, body, ctype, resp.charset
    except TimeoutError:
        raise  # aiohttp's timeouts are ClientErrors too; fetch_article reports them
    except aiohttp.ClientConnectorDNSError as exc:
        if isinstance(exc.os_error, _RefusedAddressError):
            why = f"{current} resolves to a {exc.os_error.args[0]} address"
        else:
            why = f"the host name of {current} could not be resolved"
        raise _unreachable(url, why) from exc
    except ValueError as exc:  # aiohttp.InvalidURL included
        raise InvalidPostError(PostRefusal.NOT_A_URL, url=str(current)) from exc
    except aiohttp.ClientError as exc:  # refused, reset, unreachable: the log tells which
        raise _unreachable(url, f"fetching {current} failed: {exc!r}") from exc
    finally:
        await resolver.close()
    raise InvalidPostError(
        PostRefusal.TOO_MANY_REDIRECTS, url=str(url), max_redirects=max_redirects
    )


def _decode(body: bytes, declared: str | None, ctype: str) -> str:
    """Decode with the declared charset, else a ``<meta>`` one, else UTF-8, else a detected one."""
    meta = _META_CHARSET.search(body[:4096]) if ctype != "text/plain" else None
    for charset in (declared, meta.group(1).decode("ascii") if meta else None):
        if charset:
            with contextlib.suppress(LookupError):
                return body.decode(charset, errors="replace")
    with contextlib.suppress(UnicodeDecodeError):
        return body.decode("utf-8-sig")
    from charset_normalizer import from_bytes

    best = from_bytes(body).best()
    return body.decode(best.encoding if best else "cp1252", errors="replace")


def _field(doc: Any, name: str) -> str:
    value = doc.get(name) if isinstance(doc, dict) else getattr(doc, name, None)
    return value.strip() if isinstance(value, str) else ""


def _extract(html: str, url: str) -> tuple[str, str, datetime.date | None, str]:
    """Main text, title, publication date and site name of an HTML page (blocking)."""
    try:
        import trafilatura
    except ImportError as exc:
        msg = "Fetching articles needs trafilatura: pip install trafilatura"
        raise ModelUnavailableError(msg) from exc
    # Dates from metadata only, no guesses from years in the text ("by the end of 2026").
    dates = {"original_date": True, "extensive_search": False}
    doc = trafilatura.bare_extraction(
        html, url=url, with_metadata=True, include_comments=False, date_extraction_params=dates
    )
    if doc is None:
        return "", "", None, ""
    published = None
    with contextlib.suppress(ValueError):
        published = datetime.date.fromisoformat(_field(doc, "date")[:10])
    return _field(doc, "text"), _field(doc, "title"), published, _field(doc, "sitename")


async def fetch_article(
    url: str,
    *,
    allow_private: bool = False,
    timeout_s: float = 15.0,
    max_bytes: int = 5_000_000,
    max_redirects: int = 5,
) -> FetchedArticle:
    """Download ``url`` and extract its article.

    Raises:
        InvalidPostError: the URL is refused (not http/https), cannot be reached
            (:data:`UNREACHABLE`, the one sentence for a private or local address unless
            ``allow_private``, a name that does not resolve, a failed connection, no
            answer within ``timeout_s``), or the page is an error, too large, not HTML,
            plain text or an image, or holds no article text.
    """
    try:
        start = URL(url.strip())
    except (ValueError, TypeError) as exc:
        raise InvalidPostError(PostRefusal.NOT_A_URL, url=str(url)) from exc
    _check_target(start, allow_private, start)
    accept = "text/html,application/xhtml+xml,text/plain,image/jpeg,image/png,image/webp,image/gif"
    headers = {"User-Agent": USER_AGENT, "Accept": accept}
    try:
        async with asyncio.timeout(timeout_s):
            final, body, ctype, charset = await _download(
                start, allow_private, max_bytes, max_redirects, headers
            )
    except TimeoutError as exc:
        raise _unreachable(start, f"no answer within {timeout_s:g} s") from exc
    if ctype in _IMAGE_TYPES:
        return FetchedArticle(url, str(final), "", "", None, final.host or "", body, ctype)
    text = _decode(body, charset, ctype)
    if ctype == "text/plain":
        text, title, published, site = text.strip(), "", None, ""
    else:
        html = text[:MAX_HTML_CHARS]
        try:
            text, title, published, site = await EXTRACTION.run(
                _extract, html, str(final), timeout_s=EXTRACT_TIMEOUT_S
            )
        except (WorkTimeoutError, MemoryError) as exc:
            raise InvalidPostError(PostRefusal.TOO_COMPLEX, url=str(url)) from exc
    if not text:
        raise InvalidPostError(PostRefusal.NO_ARTICLE, url=str(url))
    text = cut_at_word(text, MAX_POST_CHARS)
    site = site or final.host or ""
    return FetchedArticle(url, str(final), title, text, published, site)
