"""The web queries Stage 1 sends: eq. 6's query from the keywords (or, with no entity
anchors, the post's first words), and ToE's counter-evidence query."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence

from ..config import EngineSettings
from ..records.notes import Note, no_entities
from ..records.stage1 import Keyword
from .web.base import WIKIPEDIA_DOMAINS, WebQuery

__all__ = ["FALLBACK_QUERY_CHARS", "FALLBACK_QUERY_WORDS", "counter_query", "web_query"]

FALLBACK_QUERY_WORDS = 12
FALLBACK_QUERY_CHARS = 100


def web_query(
    settings: EngineSettings,
    keywords: Sequence[Keyword],
    lead: str,
    published: dt.date | None,
    found_notes: list[Note],
    language: str,
) -> WebQuery:
    """Eq. 6: every keyword required; with no entity anchors (Appendix A.1), the first
    words of ``lead`` (the post's first sentence) instead, noted in ``found_notes``;
    ``language`` the post's, as the search's hint."""
    if keywords:
        terms: tuple[str, ...] = tuple(k.text for k in keywords)
        exact = True
    else:
        terms = tuple(lead[:FALLBACK_QUERY_CHARS].split()[:FALLBACK_QUERY_WORDS])
        exact = False
        wiki = (
            "Wikipedia looks only for the article titles it names"
            if settings.wikipedia.title_matches
            else "Wikipedia is skipped"
        )
        found_notes.append(no_entities(wiki))
    paper = settings.retrieval.mode == "paper"
    return WebQuery(
        keywords=terms,
        exact=exact,
        max_results=settings.web.max_results,
        cutoff=published - dt.timedelta(days=1) if published else None,
        # The paper keeps news sites out of an evaluation; live, they are evidence.
        exclude_domains=tuple(settings.web.exclude_domains) if paper else WIKIPEDIA_DOMAINS,
        language=language,
    )


def counter_query(
    settings: EngineSettings, query: WebQuery, keywords: Sequence[Keyword]
) -> WebQuery | None:
    """ToE's counter-evidence query: the top keywords with any of the debunking terms;
    ``None`` when it is off or the post has no keywords."""
    r = settings.retrieval
    if not r.counter_query or not keywords or not r.counter_terms:
        return None
    terms = tuple(k.text for k in keywords[: r.counter_keywords])
    return dataclasses.replace(query, keywords=terms, exact=True, any_of=tuple(r.counter_terms))
