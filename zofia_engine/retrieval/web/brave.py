"""Brave Search as an open-web backend (paper §3.4, eq. 6).

One GET to Brave's Web Search API per query. Wikipedia is excluded in the query
itself (the paper takes Wikipedia from its own channel), the news vertical is
left out with ``result_filter=web``, and the post's cutoff date becomes Brave's
custom ``freshness`` range. Excluded domains and late-dated pages are filtered
again on the way back, since neither the query operator nor the index date is
a guarantee.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any, Unpack

from ...config import WebSettings
from ...errors import SourceResponseError
from ...records.stage1 import WebResult
from ...snippets import parse_date, snippet_text
from ..http import JsonHttpClient, Pace, paced, required_key
from .base import WIKIPEDIA_EXCLUSION, SearchBackend, WebQuery, admit, compose_query

__all__ = ["BraveSearch"]

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.search.brave.com/res/v1"
MAX_COUNT = 20  # Brave answers 422 above this
MAX_QUERY_CHARS = 400  # Brave's limits on ``q``; beyond them it answers 422
MAX_QUERY_WORDS = 50
_SAME_CODE = "ar bn cs da de en es fi fr he hi hu it ja ko ms nl pl ro ru sv th tr uk vi"
#: the post languages passed on as ``search_lang``, by Brave's code for each. Brave has no
#: code for Greek, Persian, Indonesian, Swahili, Tagalog or Urdu, and splits Portuguese by
#: country and Chinese by script, so a post in one of those is searched with Brave's
#: default (English) and its own words.
SEARCH_LANGS: dict[str, str] = {**{code: code for code in _SAME_CODE.split()}, "no": "nb"}
# Brave's human-readable ``age``, used only when ``page_age`` is absent.
AGE_FORMATS = ("%B %d, %Y", "%b %d, %Y")


class BraveSearch(SearchBackend):
    """The Brave Web Search API.

    Args:
        api_key: the subscription token; empty raises :class:`ConfigError`.
        base_url: the API root, without ``/web/search``.
        pace: how requests are paced and retried (:class:`~..http.Pace`; 1 request a
            second by default, the free plan's rate).
    """

    name = "web:brave"

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        **pace: Unpack[Pace],
    ) -> None:
        key = required_key(api_key, "web.brave.api_key")
        self._endpoint = base_url.rstrip("/") + "/web/search"
        headers = {"X-Subscription-Token": key, "Accept": "application/json"}
        pace = Pace(requests_per_second=1.0) | pace  # the free plan's rate
        self._http = JsonHttpClient(self.name, headers=headers, **pace)

    @classmethod
    def from_settings(cls, web: WebSettings) -> BraveSearch:
        """The backend with the key, URL, timeout, retries and rate of the ``[web]`` and
        ``[web.brave]`` settings."""
        return cls(web.brave.api_key, base_url=web.brave.base_url, **paced(web, web.brave))

    def params(self, query: WebQuery) -> dict[str, str | int]:
        """Brave's query-string parameters for ``query``. ``q`` is eq. 6 with Wikipedia
        excluded, cut to Brave's 400 characters / 50 words by dropping trailing keywords;
        ``count`` asks for twice ``max_results`` (at most 20) so that dropping excluded
        domains still leaves enough hits; ``search_lang`` is the post's language when
        Brave takes its code (:data:`SEARCH_LANGS`)."""
        params: dict[str, str | int] = {
            "q": _fit_query(query.keywords, query.exact, query.any_of),
            "count": min(MAX_COUNT, max(1, query.max_results * 2)),
            "result_filter": "web",
            "extra_snippets": "true",
            "safesearch": "moderate",
        }
        if query.language in SEARCH_LANGS:
            params["search_lang"] = SEARCH_LANGS[query.language]
        if query.cutoff is not None:
            params["freshness"] = f"1970-01-01to{query.cutoff:%Y-%m-%d}"
        return params

    async def search(self, query: WebQuery) -> list[WebResult]:
        """Run ``query`` against Brave.

        Args:
            query: the keywords, result budget, cutoff and excluded domains.

        Returns:
            At most ``query.max_results`` results, in Brave's order, none from an
            excluded domain and none dated after the cutoff.

        Raises:
            SourceRateLimitedError: Brave kept answering 429.
            SourceTimeoutError: Brave did not answer in time.
            SourceResponseError: an error status, no connection, or a body that is
                not Brave's format.
        """
        if query.max_results <= 0 or not compose_query(query.keywords, query.exact):
            return []
        body = await self._http.get_json(self._endpoint, self.params(query))
        return admit((_to_result(item) for item in _web_results(body)), query)

    async def aclose(self) -> None:
        """Close the HTTP session."""
        await self._http.aclose()


def _fit_query(keywords: tuple[str, ...], exact: bool = True, any_of: tuple[str, ...] = ()) -> str:
    """Eq. 6 plus the Wikipedia filter, within Brave's limits on ``q``.

    Keywords come in selection order, so when the whole conjunction would be
    refused, the last ones are dropped until it fits.
    """
    kept = list(keywords)
    while kept:
        q = compose_query(kept, exact, any_of) + WIKIPEDIA_EXCLUSION
        if len(q) <= MAX_QUERY_CHARS and len(q.split()) <= MAX_QUERY_WORDS:
            if len(kept) < len(keywords):
                log.info(
                    "%s: query cut to %d of %d keywords", BraveSearch.name, len(kept), len(keywords)
                )
            return q
        kept.pop()
    # Not even the first keyword fits: keep the start of it.
    first = " ".join(keywords[0].split()[: MAX_QUERY_WORDS // 2]) if keywords else ""
    return compose_query([first[: MAX_QUERY_CHARS // 2]], exact, any_of) + WIKIPEDIA_EXCLUSION


def _web_results(body: Any) -> list[dict[str, Any]]:
    """The ``web.results`` list of a Brave response, checked for shape."""
    if not isinstance(body, dict):
        raise SourceResponseError(
            BraveSearch.name, f"expected a JSON object, got {type(body).__name__}"
        )
    web = body.get("web")
    if web is None:
        return []  # Brave leaves out the web section when nothing matched
    if not isinstance(web, dict):
        raise SourceResponseError(BraveSearch.name, "'web' is not an object")
    items = web.get("results", [])
    if not isinstance(items, list):
        raise SourceResponseError(BraveSearch.name, "'web.results' is not a list")
    if not all(isinstance(item, dict) for item in items):
        raise SourceResponseError(BraveSearch.name, "'web.results' holds a non-object")
    return items


def _to_result(item: dict[str, Any]) -> WebResult | None:
    """One Brave web result as a :class:`WebResult`; ``None`` when it has no URL."""
    url = item.get("url")
    if not isinstance(url, str) or not url.strip():
        return None
    extra = item.get("extra_snippets")
    snippets = [snippet_text(s) for s in extra] if isinstance(extra, list) else []
    published: dt.date | None = parse_date(item.get("page_age"))
    if published is None:
        published = parse_date(item.get("age"), *AGE_FORMATS)
    return WebResult(
        title=snippet_text(item.get("title")),
        url=url.strip(),
        snippet=snippet_text(item.get("description")),
        description=" ".join(s for s in snippets if s),
        published=published,
        source=BraveSearch.name,
    )
