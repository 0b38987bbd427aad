"""Live Wikipedia through the MediaWiki Action API.

One GET per keyword: a full-text search used as a *generator*, so the same
request also returns, for every hit, its intro extract (plain text), its short
description, whether it is a disambiguation page, and its canonical URL::

    action=query&generator=search&gsrsearch=<keyword>
        &prop=extracts|description|pageprops|info&exintro=1&explaintext=1
        &ppprop=disambiguation&inprop=url&formatversion=2

With ``formatversion=2`` the pages come back as a list in no useful order;
each carries ``index``, its rank in the search, which is what the candidates
are sorted by. Disambiguation pages and pages without an extract are dropped,
which is why a few more hits than asked for are requested.

MediaWiki reports most errors with HTTP 200 and an ``error`` object in the
body; those are raised as :class:`~zofia_engine.errors.SourceResponseError`
like any other malformed answer. Rate limiting, retries and the translation
of HTTP failures are :class:`~zofia_engine.retrieval.http.JsonHttpClient`'s.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Unpack
from urllib.parse import quote, urlsplit

from ...config import MediaWikiSettings, WikipediaSettings
from ...errors import ConfigError, SourceError, SourceResponseError
from ...records.stage1 import WikiCandidate
from ..http import JsonHttpClient, Pace, paced
from .base import WikipediaBackend
from .gazetteer import TitleMatch, capitalised_spans
from .titles import is_sense_of, normalize_title, without_disambiguator

__all__ = ["DEFAULT_API_URL", "MediaWikiBackend", "article_url"]

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://en.wikipedia.org/w/api.php"
DEFAULT_ARTICLE_BASE = "https://en.wikipedia.org/wiki/"
_DEFAULT_USER_AGENT: str = MediaWikiSettings.model_fields["user_agent"].default

# Intro extracts are served for at most 20 pages per request (exlimit=max).
_MAX_PAGES = 20
# Hits requested beyond ``limit`` to make up for dropped disambiguation pages.
_EXTRA_HITS = 3
# The title pass cannot list the wiki's titles: it searches this many of the post's
# capitalised names (multi-word ones first) and keeps exact-title hits.
TITLE_SEARCHES = 3
# Characters Wikipedia leaves unescaped in its own article URLs.
_URL_SAFE = "()_,:;!*'@$/-."


def article_url(title: str, base: str = DEFAULT_ARTICLE_BASE) -> str:
    """Build the article URL of ``title`` the way Wikipedia writes it.

    Args:
        title: the page title, with spaces.
        base: the wiki's article path prefix, ending in ``/``.

    Returns:
        ``base`` followed by the title with spaces as underscores, percent-encoded.
    """
    return base + quote(title.replace(" ", "_"), safe=_URL_SAFE)


def _article_base(api_url: str) -> str:
    """The ``/wiki/`` prefix on the same host as ``api_url`` (all Wikimedia wikis use it)."""
    parts = urlsplit(api_url)
    if not parts.scheme or not parts.netloc:
        return DEFAULT_ARTICLE_BASE
    return f"{parts.scheme}://{parts.netloc}/wiki/"


class MediaWikiBackend(WikipediaBackend):
    """Candidate senses from a live wiki's search, one request per keyword.

    Args:
        api_url: the wiki's ``api.php`` endpoint.
        user_agent: sent as ``User-Agent``; Wikimedia's policy requires one that
            names the tool and a contact.
        pace: how requests are paced and retried (:class:`~..http.Pace`; 5 requests a
            second by default, ``Retry-After`` winning over the backoff).

    Raises:
        ConfigError: ``user_agent`` or ``api_url`` is empty.
    """

    name = "wikipedia:mediawiki"

    def __init__(
        self,
        api_url: str = DEFAULT_API_URL,
        *,
        user_agent: str = _DEFAULT_USER_AGENT,
        **pace: Unpack[Pace],
    ) -> None:
        if not api_url.strip():
            raise ConfigError("wikipedia.mediawiki.api_url: must not be empty")
        if not user_agent.strip():
            raise ConfigError(
                "wikipedia.mediawiki.user_agent: must not be empty "
                "(Wikimedia's User-Agent policy requires one)"
            )
        self.api_url = api_url
        self.user_agent = user_agent
        self._article_base = _article_base(api_url)
        pace = Pace(requests_per_second=5.0) | pace
        self._http = JsonHttpClient(self.name, headers={"User-Agent": user_agent}, **pace)

    @classmethod
    def from_settings(cls, wiki: WikipediaSettings) -> MediaWikiBackend:
        """The backend of the ``[wikipedia]`` settings (its ``mediawiki`` table names the
        endpoint), with no connection opened yet."""
        mediawiki = wiki.mediawiki
        return cls(mediawiki.api_url, user_agent=mediawiki.user_agent, **paced(wiki, mediawiki))

    @staticmethod
    def search_params(keyword: str, limit: int) -> dict[str, str | int]:
        """The query string for one keyword.

        Args:
            keyword: the search text.
            limit: how many candidates the caller wants.

        Returns:
            The Action API parameters (``formatversion=2``, search generator).
        """
        return {
            "action": "query",
            "format": "json",
            "formatversion": 2,
            "generator": "search",
            "gsrsearch": keyword,
            "gsrlimit": min(limit + _EXTRA_HITS, _MAX_PAGES),
            "gsrnamespace": 0,
            "prop": "extracts|description|pageprops|info",
            "exintro": 1,
            "explaintext": 1,
            "exlimit": "max",
            "ppprop": "disambiguation",
            "inprop": "url",
            "redirects": 1,
        }

    async def candidates(self, keyword: str, limit: int) -> list[WikiCandidate]:
        """Search the wiki for ``keyword`` and return up to ``limit`` articles.

        Args:
            keyword: the keyword as written in the post.
            limit: the most candidates to return.

        Returns:
            Articles in search-rank order whose title has at least half of the
            keyword's words (else only the top hit), without disambiguation pages or
            pages with no extract; ``[]`` when the search finds nothing (or the keyword
            is blank, which sends no request).

        Raises:
            SourceRateLimitedError: still 429 after every retry.
            SourceTimeoutError: no answer in time after every retry.
            SourceResponseError: an HTTP error, a MediaWiki ``error`` body, or a
                body that is not the API's format.
        """
        query = keyword.strip()
        if not query or limit <= 0:
            return []
        body = await self._http.get_json(self.api_url, self.search_params(query, limit))
        found = self._parse(body)
        # Full-text search also finds pages that merely mention the keyword; the
        # senses are the pages whose title can name it. If none can, the best
        # search hit stands alone ("Floridians" -> "Florida").
        senses = [c for c in found if is_sense_of(query, c.title)]
        return (senses or found[:1])[:limit]

    async def title_matches(
        self, text: str, limit: int, skip: frozenset[str] = frozenset()
    ) -> list[TitleMatch]:
        """The fallback of the title pass: search the post's capitalised names.

        Up to :data:`TITLE_SEARCHES` of them (and ``limit``), names of several words
        first ("Statue of Liberty", "Mona Lisa"; :func:`.gazetteer.capitalised_spans`),
        one search each; a hit counts when its title, disambiguator aside, is the
        name (possessive or plural aside).

        Raises:
            SourceError: every search failed (as for :meth:`candidates`).
        """
        spans = [s for s in capitalised_spans(text) if s.key not in skip]
        spans = spans[: min(limit, TITLE_SEARCHES)]
        if not spans:
            return []
        found = await asyncio.gather(
            *(self.candidates(span.text, _EXTRA_HITS) for span in spans), return_exceptions=True
        )
        matches = []
        for span, hits in zip(spans, found, strict=True):
            if isinstance(hits, BaseException):
                continue
            keys = set(span.alternatives())
            exact = [c for c in hits if normalize_title(without_disambiguator(c.title)) in keys]
            if exact:
                matches.append(TitleMatch(span.text, span.start, exact))
        errors = [e for e in found if isinstance(e, BaseException)]
        for error in errors:
            if not isinstance(error, SourceError | OSError):
                raise error
        if errors and len(errors) == len(spans):
            raise errors[0]
        return matches

    async def count_articles(self) -> int | None:
        """The wiki's own count of content articles (``meta=siteinfo``, statistics).

        Raises:
            SourceError: as for :meth:`candidates`.
        """
        params: dict[str, str | int] = {
            "action": "query",
            "format": "json",
            "formatversion": 2,
            "meta": "siteinfo",
            "siprop": "statistics",
        }
        body = await self._http.get_json(self.api_url, params)
        if isinstance(body, dict):
            self._raise_api_error(body)
        try:
            return int(body["query"]["statistics"]["articles"])
        except (KeyError, TypeError, ValueError) as exc:
            raise SourceResponseError(self.name, "siteinfo has no article count") from exc

    def _parse(self, body: Any) -> list[WikiCandidate]:
        if not isinstance(body, dict):
            raise SourceResponseError(
                self.name, f"expected a JSON object, got {type(body).__name__}"
            )
        self._raise_api_error(body)
        if body.get("warnings"):
            log.debug("%s: API warnings: %s", self.name, body["warnings"])
        query = body.get("query")
        if query is None:  # the search found nothing
            return []
        if not isinstance(query, dict):
            raise SourceResponseError(self.name, "'query' is not an object")
        pages = query.get("pages", [])
        if not isinstance(pages, list):
            raise SourceResponseError(
                self.name, "'query.pages' is not a list (formatversion=2 expected)"
            )
        ranked = sorted(enumerate(pages), key=lambda item: (_search_rank(item[1]), item[0]))
        found = (self._candidate(page) for _, page in ranked)
        return [c for c in found if c is not None]

    def _raise_api_error(self, body: dict[str, Any]) -> None:
        """Raise for MediaWiki's error bodies, both the default and ``errorformat`` styles."""
        error = body.get("error")
        if error is None and isinstance(body.get("errors"), list) and body["errors"]:
            error = body["errors"][0]
        if error is None:
            return
        if not isinstance(error, dict):
            raise SourceResponseError(self.name, f"API error: {error!r}"[:300])
        code = error.get("code", "unknown")
        info = error.get("info") or error.get("text") or ""
        raise SourceResponseError(self.name, f"API error {code}: {info}"[:300])

    def _candidate(self, page: Any) -> WikiCandidate | None:
        if not isinstance(page, dict):
            raise SourceResponseError(self.name, "a page in 'query.pages' is not an object")
        if page.get("missing") or page.get("invalid"):
            return None
        title = page.get("title")
        if not isinstance(title, str) or not title:
            raise SourceResponseError(self.name, "a page in 'query.pages' has no title")
        props = page.get("pageprops")
        if isinstance(props, dict) and "disambiguation" in props:
            return None
        extract = page.get("extract")
        if not isinstance(extract, str) or not extract.strip():
            return None
        description = page.get("description")
        url = page.get("fullurl")
        return WikiCandidate(
            title=title,
            url=url if isinstance(url, str) and url else article_url(title, self._article_base),
            description=description if isinstance(description, str) else "",
            extract=extract.strip(),
        )

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._http.aclose()


def _search_rank(page: Any) -> float:
    """A page's ``index`` (1 = best hit); pages without one go last."""
    index = page.get("index") if isinstance(page, dict) else None
    if isinstance(index, int) and not isinstance(index, bool):
        return float(index)
    return float("inf")
