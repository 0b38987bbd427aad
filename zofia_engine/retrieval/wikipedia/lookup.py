"""Stage 1's Wikipedia lookup (paper §3.4, eq. 7): each keyword's candidate articles,
the sense whose description fits the keyword's context best, its first sentences.

With ``[wikipedia] title_matches`` on, the articles whose title the post writes out
(the backend's ``title_matches``: "Mona Lisa", "Statue of Liberty", "photosynthesis",
which the small NER model does not tag) are looked up at the same time. They never
displace a keyword's article: they come after the keywords' articles, those already
there are left out, and at most ``max_candidates`` are added, the closest to the post
first (``ranking.py``). A phrase inside a keyword that found articles is not one of
them ("Island" in "Liberty Island" when that has an article).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import SourceError
from ...ports import TextEncoder
from ...records.stage1 import SourceStatus, WikiCandidate, WikipediaEntry
from ...stage1_settings import WikipediaSettings
from ..disambiguation import first_sentences
from ..ner.sentences import split_sentences
from ..salience import PostView, SalienceResult
from ..web.search import source_failure
from .base import WikipediaBackend
from .gazetteer import TitleMatch
from .ranking import Pick, SenseRequest, pick_articles
from .titles import normalize_title

__all__ = ["search_wikipedia"]

# Phrases asked of the title pass per article it may add: ranking needs some choice.
PHRASES_PER_ENTRY = 2
MAX_PHRASES = 20


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


@dataclass
class _Found:
    """What the backend returned: per keyword its candidates and the title matches,
    and what failed."""

    keywords: list[Sequence[WikiCandidate]]
    titles: list[TitleMatch]
    failures: list[BaseException]  # the keywords' failed lookups, then the title pass's
    keyword_failures: int
    title_pass: bool


async def search_wikipedia(
    backend: WikipediaBackend | None,
    wiki: WikipediaSettings,
    encoder: TextEncoder,
    chosen: list[int],
    salience: SalienceResult,
    timings: dict[str, float],
    post: PostView | None = None,
) -> tuple[list[WikipediaEntry], SourceStatus]:
    """The chosen sense of each keyword (``chosen``: indices of salience's entities;
    eq. 7) and its first sentences, then the articles ``post`` names by title (when
    given and ``wiki.title_matches`` is on), and how the source fared; ``timings``
    gets ``wikipedia_ms`` and ``disambiguation_ms``."""
    if backend is None:
        return [], SourceStatus(name="wikipedia", status="disabled", detail="turned off")
    if not wiki.title_matches:
        post = None
    if not chosen and post is None:
        return [], SourceStatus(name=backend.name, status="skipped", detail="no keywords")
    t = time.perf_counter()
    found = await _look_up(backend, wiki, chosen, salience, post)
    if not chosen and not found.titles and not found.failures:
        detail = "no keywords, and no article title in the post"
        return [], SourceStatus(name=backend.name, status="skipped", detail=detail)
    requests: list[SenseRequest] = [
        (
            salience.contexts[i],
            [salience.entities[i].text, *salience.entities[i].variants],
            salience.context_vectors[i],
            candidates,
        )
        for i, candidates in zip(chosen, found.keywords, strict=True)
    ]
    titles = _outside_keywords(found.titles, chosen, salience, found.keywords, wiki)
    d = time.perf_counter()
    keywords = [salience.entities[i].text for i in chosen]
    vector = post.vector if post is not None else None
    picks = await asyncio.to_thread(pick_articles, requests, keywords, titles, vector, encoder)
    timings["disambiguation_ms"] = _ms(time.perf_counter() - d)
    entries = _merged(picks, wiki, backend.name)
    elapsed = time.perf_counter() - t
    timings["wikipedia_ms"] = _ms(elapsed)
    return entries, _status(backend.name, entries, found, chosen, elapsed)


async def _look_up(
    backend: WikipediaBackend,
    wiki: WikipediaSettings,
    chosen: list[int],
    salience: SalienceResult,
    post: PostView | None,
) -> _Found:
    """The keywords' candidates and the post's title matches, all at once."""
    skip = frozenset(
        normalize_title(name)
        for i in chosen
        for name in (salience.entities[i].text, *salience.entities[i].variants)
    )
    limit = min(MAX_PHRASES, PHRASES_PER_ENTRY * wiki.max_candidates)
    outcomes, (matches, error) = await asyncio.gather(
        asyncio.gather(
            *(backend.candidates(salience.entities[i].text, wiki.max_candidates) for i in chosen),
            return_exceptions=True,
        ),
        _title_pass(backend, post, limit, skip),
    )
    failures = [o for o in outcomes if isinstance(o, BaseException)]
    for failure in failures:
        if not isinstance(failure, SourceError | OSError):
            raise failure
    keywords: list[Sequence[WikiCandidate]] = [
        [] if isinstance(o, BaseException) else o for o in outcomes
    ]
    errors = [*failures, *([error] if error else [])]
    return _Found(keywords, matches, errors, len(failures), post is not None)


async def _title_pass(
    backend: WikipediaBackend, post: PostView | None, limit: int, skip: frozenset[str]
) -> tuple[list[TitleMatch], SourceError | OSError | None]:
    if post is None:
        return [], None
    try:
        return await backend.title_matches(post.text, limit, skip), None
    except (SourceError, OSError) as exc:
        return [], exc


def _outside_keywords(
    matches: list[TitleMatch],
    chosen: list[int],
    salience: SalienceResult,
    found: list[Sequence[WikiCandidate]],
    wiki: WikipediaSettings,
) -> list[TitleMatch]:
    """Title matches that are not part of a keyword that has its own articles
    ("Island" in "Liberty Island" when that has an article), senses capped."""
    spans = [
        (m.start, m.end)
        for i, candidates in zip(chosen, found, strict=True)
        if candidates
        for m in salience.entities[i].mentions
    ]
    kept = []
    for match in matches:
        end = match.start + len(match.phrase)
        if any(a <= match.start and end <= b for a, b in spans):
            continue
        if match.candidates:
            kept.append(
                TitleMatch(match.phrase, match.start, match.candidates[: wiki.max_candidates])
            )
    return kept


def _merged(picks: list[Pick], wiki: WikipediaSettings, source: str) -> list[WikipediaEntry]:
    """The keywords' entries, then up to ``max_candidates`` title matches whose article
    no entry has yet."""
    entries: list[WikipediaEntry] = []
    titles: set[str] = set()
    added = 0
    for pick in picks:
        if pick.by_title and (added >= wiki.max_candidates or pick.candidate.title in titles):
            continue
        added += pick.by_title
        titles.add(pick.candidate.title)
        c = pick.candidate
        entries.append(
            WikipediaEntry(
                keyword=pick.keyword,
                title=c.title,
                url=c.url,
                text=first_sentences(c.extract, wiki.sentences, split_sentences),
                description=c.description,
                score=round(pick.score, 6),
                candidates=pick.candidates,
                source=source,
            )
        )
    return entries


def _status(
    name: str, entries: list[WikipediaEntry], found: _Found, chosen: list[int], elapsed: float
) -> SourceStatus:
    """Failed when nothing came back and every lookup that could bring something failed;
    else ok or empty, with what failed or found nothing."""
    failures = found.failures
    if failures and not entries and found.keyword_failures == len(chosen):
        return SourceStatus(
            name=name, status="failed", detail=source_failure(failures[0]), elapsed_ms=_ms(elapsed)
        )
    lookups = len(chosen) + found.title_pass
    detail = (
        f"{len(failures)} of {lookups} lookups failed: {source_failure(failures[0])}"
        if failures
        else ""
    )
    missing = sum(1 for c in found.keywords if not c)
    if missing and not failures:
        detail = f"{missing} of {len(chosen)} keywords have no article"
    return SourceStatus(
        name=name,
        status="ok" if entries else "empty",
        detail=detail,
        results=len(entries),
        elapsed_ms=_ms(elapsed),
    )
