"""A SearXNG instance as an open-web backend (paper §3.4, eq. 6).

SearXNG's JSON API (``/search?format=json``) must be enabled in the instance's
``settings.yml``; otherwise it answers 403. It has no absolute date filter
(only ``time_range=day|month|year``), so the post's cutoff is applied here, on
each result's ``publishedDate``; undated results are kept, as the paper's
pipeline has no other date to judge them by.
"""

from __future__ import annotations

import logging
from typing import Any, Unpack

from ...config import WebSettings
from ...errors import ConfigError, SourceResponseError
from ...records.stage1 import WebResult
from ...snippets import parse_date, snippet_text
from ..http import JsonHttpClient, Pace, paced
from .base import WIKIPEDIA_EXCLUSION, SearchBackend, WebQuery, admit, compose_query

__all__ = ["SearxngSearch"]

log = logging.getLogger(__name__)


class SearxngSearch(SearchBackend):
    """A SearXNG metasearch instance.

    Args:
        base_url: the instance root, e.g. ``http://localhost:8888``; empty raises
            :class:`ConfigError`.
        categories: SearXNG categories to search, comma-separated.
        language: a language code, or ``"all"``: then each query asks in the post's
            language when it has one (:attr:`WebQuery.language`).
        pace: how requests are paced and retried (:class:`~..http.Pace`; 2 requests a
            second by default).
    """

    name = "web:searxng"

    def __init__(
        self,
        base_url: str,
        *,
        categories: str = "general",
        language: str = "all",
        **pace: Unpack[Pace],
    ) -> None:
        if not base_url.strip():
            raise ConfigError("web.searxng.base_url is empty")
        self._endpoint = base_url.strip().rstrip("/") + "/search"
        self._categories = categories
        self._language = language
        pace = Pace(requests_per_second=2.0) | pace
        self._http = JsonHttpClient(self.name, headers={"Accept": "application/json"}, **pace)

    @classmethod
    def from_settings(cls, web: WebSettings) -> SearxngSearch:
        """The backend with the URL, categories, timeout, retries and rate of the
        ``[web]`` and ``[web.searxng]`` settings."""
        searxng = web.searxng
        return cls(searxng.base_url, categories=searxng.categories, **paced(web, searxng))

    def params(self, query: WebQuery) -> dict[str, str | int]:
        """SearXNG's query-string parameters for ``query`` (no date parameter: the
        cutoff is applied afterwards)."""
        return {
            "q": compose_query(query.keywords, query.exact, query.any_of) + WIKIPEDIA_EXCLUSION,
            "format": "json",
            "categories": self._categories,
            "language": (query.language or "all") if self._language == "all" else self._language,
            "safesearch": 1,
            "pageno": 1,
        }

    async def search(self, query: WebQuery) -> list[WebResult]:
        """Run ``query`` against the instance.

        Args:
            query: the keywords, result budget, cutoff and excluded domains.

        Returns:
            At most ``query.max_results`` results in SearXNG's order, none from an
            excluded domain, none in the news category, none dated after the cutoff.

        Raises:
            SourceRateLimitedError: the instance kept answering 429.
            SourceTimeoutError: the instance did not answer in time.
            SourceResponseError: an error status, no connection, a body that is not
                SearXNG's format, or no results because every engine failed.
        """
        if query.max_results <= 0 or not compose_query(query.keywords, query.exact):
            return []
        body = await self._http.get_json(self._endpoint, self.params(query))
        items, unresponsive = _parse_body(body)
        if unresponsive:
            log.info("%s: unresponsive engines: %s", self.name, ", ".join(unresponsive))
        if not items and unresponsive:
            raise SourceResponseError(
                self.name, "no results; unresponsive engines: " + ", ".join(unresponsive)
            )
        news_dropped = (item for item in items if item.get("category") != "news")
        return admit((_to_result(item) for item in news_dropped), query)

    async def aclose(self) -> None:
        """Close the HTTP session."""
        await self._http.aclose()


def _parse_body(body: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """The result objects and the unresponsive engines' descriptions, checked for shape."""
    if not isinstance(body, dict):
        raise SourceResponseError(
            SearxngSearch.name, f"expected a JSON object, got {type(body).__name__}"
        )
    items = body.get("results")
    if not isinstance(items, list):
        raise SourceResponseError(SearxngSearch.name, "'results' is missing or not a list")
    if not all(isinstance(item, dict) for item in items):
        raise SourceResponseError(SearxngSearch.name, "'results' holds a non-object")
    unresponsive: list[str] = []
    raw = body.get("unresponsive_engines")
    for entry in raw if isinstance(raw, list) else []:
        if isinstance(entry, list) and entry:
            unresponsive.append(" ".join(str(part) for part in entry[:2]))
    return items, unresponsive


def _to_result(item: dict[str, Any]) -> WebResult | None:
    """One SearXNG result as a :class:`WebResult`; ``None`` when it has no URL."""
    url = item.get("url")
    if not isinstance(url, str) or not url.strip():
        return None
    return WebResult(
        title=snippet_text(item.get("title")),
        url=url.strip(),
        snippet=snippet_text(item.get("content")),
        description="",
        published=parse_date(item.get("publishedDate")),
        source=SearxngSearch.name,
    )
