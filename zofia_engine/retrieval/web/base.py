"""The open-web search seam (paper §3.4, eq. 6): one async method per backend."""

from __future__ import annotations

import abc
import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ...records.stage1 import WebResult

__all__ = [
    "WIKIPEDIA_DOMAINS",
    "WIKIPEDIA_EXCLUSION",
    "SearchBackend",
    "WebQuery",
    "admit",
    "compose_query",
    "is_excluded",
]

# Appended to every web query: the paper takes Wikipedia from its own channel.
WIKIPEDIA_EXCLUSION = " -site:wikipedia.org"
#: What every search mode leaves out of the web results: Wikipedia has its own channel.
WIKIPEDIA_DOMAINS = ("wikipedia.org", "wikimedia.org")


@dataclass(frozen=True)
class WebQuery:
    """One search: every keyword required (eq. 6), at most ``max_results`` hits.

    ``exact`` quotes each keyword so it must appear as a phrase; the fallback
    query of a post without entities is plain words. ``any_of`` adds terms of which
    one must appear (the counter-evidence query's "hoax", "fact check" …).
    ``cutoff`` is the last day a result may be from: the day before the post's
    publication date, so the answer cannot leak into the evidence. ``language`` is the
    ISO 639-1 code of the post's language (:func:`~zofia_engine.language.detect_language`),
    a hint a backend may pass on (Brave's ``search_lang``, SearXNG's ``language``);
    ``""``: unknown.
    """

    keywords: tuple[str, ...]
    exact: bool = True
    max_results: int = 10
    cutoff: dt.date | None = None
    exclude_domains: tuple[str, ...] = field(default=())
    any_of: tuple[str, ...] = field(default=())
    language: str = ""


def compose_query(
    keywords: tuple[str, ...] | list[str], exact: bool = True, any_of: tuple[str, ...] = ()
) -> str:
    """Eq. 6: the conjunction of all keywords, each quoted so it must appear as a phrase.

    With ``exact=False`` the terms are joined as plain words. ``any_of`` is appended as
    a disjunction, ``("fact check" OR hoax)``, multi-word terms quoted.
    """
    terms = [k.replace('"', " ").strip() for k in keywords]
    query = " ".join(f'"{t}"' for t in terms if t) if exact else " ".join(t for t in terms if t)
    options = [t.replace('"', " ").strip() for t in any_of]
    options = [f'"{t}"' if " " in t else t for t in options if t]
    if options:
        query = f"{query} ({' OR '.join(options)})"
    return query


def is_excluded(url: str, domains: tuple[str, ...] | list[str]) -> bool:
    """True when ``url``'s host is one of ``domains`` or a subdomain of one."""
    host = (urlsplit(url).hostname or "").lower()
    return any(host == d or host.endswith("." + d) for d in domains)


def admit(results: Iterable[WebResult | None], query: WebQuery) -> list[WebResult]:
    """Keep results in order, dropping unusable ones (``None``), excluded domains and
    anything dated after the cutoff, up to ``query.max_results``."""
    kept: list[WebResult] = []
    for result in results:
        if result is None or is_excluded(result.url, query.exclude_domains):
            continue
        if query.cutoff and result.published and result.published > query.cutoff:
            continue
        kept.append(result)
        if len(kept) >= query.max_results:
            break
    return kept


class SearchBackend(abc.ABC):
    """A web search API. Implementations raise :class:`SourceError` subclasses on failure.
    ``local``: it answers from this machine (no quota, no network)."""

    name: str
    local: bool = False

    @abc.abstractmethod
    async def search(self, query: WebQuery) -> list[WebResult]:
        """Run ``query`` and return at most ``query.max_results`` non-excluded results."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
