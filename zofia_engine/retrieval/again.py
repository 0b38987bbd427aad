"""Searching again with planned queries: every configured source, each query on its own.

When the first search left a claim unsettled, the panel plans new queries
(:mod:`zofia_engine.agents.planning`): the claim's own words, a question about its
checkable part, a named article. Each is run on every web backend (the local corpus is
one) as plain words, and on Wikipedia by title: the articles the query names
(:meth:`~.wikipedia.base.WikipediaBackend.title_matches`), else its closest title
(:meth:`~.wikipedia.base.WikipediaBackend.candidates`). What comes back is marked as
found by a planned query, for the report and the Evidence thread.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Sequence

from ..records.stage1 import WebResult, WikiCandidate, WikipediaEntry
from ..stage1_settings import WikipediaSettings
from .disambiguation import first_sentences
from .ner.sentences import split_sentences
from .web.base import SearchBackend, WebQuery
from .web.search import search_all
from .wikipedia.base import WikipediaBackend

__all__ = ["search_planned"]

MAX_QUERY_WORDS = 12


async def search_planned(
    queries: Sequence[str],
    backends: Sequence[SearchBackend],
    wikipedia: WikipediaBackend | None,
    wiki: WikipediaSettings,
    *,
    max_results: int,
    published: dt.date | None = None,
    language: str = "",
) -> tuple[list[WebResult], list[WikipediaEntry]]:
    """The web results and the Wikipedia articles ``queries`` find, first found first;
    a failing source finds nothing (the first search already reported its status)."""
    cutoff = published - dt.timedelta(days=1) if published else None
    web = [
        WebQuery(
            keywords=tuple(q.split()[:MAX_QUERY_WORDS]),
            exact=False,
            max_results=max_results,
            cutoff=cutoff,
            language=language,
        )
        for q in queries
    ]
    searched, named = await asyncio.gather(
        asyncio.gather(*(search_all(backends, query, {}, label="planned") for query in web)),
        asyncio.gather(*(_articles(wikipedia, wiki, q) for q in queries)),
    )
    hits: dict[str, WebResult] = {}
    for results, _ in searched:
        for hit in results:
            hits.setdefault(hit.url, hit.model_copy(update={"query": "planned"}))
    entries: dict[str, WikipediaEntry] = {}
    for articles in named:
        for entry in articles:
            entries.setdefault(entry.title, entry)
    return list(hits.values()), list(entries.values())


async def _articles(
    backend: WikipediaBackend | None, wiki: WikipediaSettings, query: str
) -> list[WikipediaEntry]:
    if backend is None:
        return []
    try:
        named = await backend.title_matches(query, limit=2)
        candidates: list[WikiCandidate] = [c for m in named for c in m.candidates[:1]]
        if not candidates:
            candidates = await backend.candidates(query, limit=1)
    except Exception:
        return []
    return [
        WikipediaEntry(
            keyword=query,
            title=c.title,
            url=c.url,
            text=first_sentences(c.extract, wiki.sentences, split_sentences),
            description=c.description,
            score=0.0,
            candidates=[c.title],
            source=backend.name,
        )
        for c in candidates
    ]
