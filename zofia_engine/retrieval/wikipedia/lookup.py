"""Stage 1's Wikipedia lookup (paper §3.4, eq. 7): each keyword's candidate articles,
the sense whose description fits the keyword's context best, its first sentences."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from ...errors import SourceError
from ...ports import TextEncoder
from ...stage1_settings import WikipediaSettings
from ..disambiguation import choose_senses, first_sentences
from ..models import SourceStatus, WikiCandidate, WikipediaEntry
from ..ner.sentences import split_sentences
from ..salience import SalienceResult
from ..web.search import source_failure
from .base import WikipediaBackend

__all__ = ["search_wikipedia"]


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


async def search_wikipedia(
    backend: WikipediaBackend | None,
    wiki: WikipediaSettings,
    encoder: TextEncoder,
    chosen: list[int],
    salience: SalienceResult,
    timings: dict[str, float],
) -> tuple[list[WikipediaEntry], SourceStatus]:
    """The chosen sense of each keyword (``chosen``: indices of salience's entities;
    eq. 7) and its first sentences, and how the source fared; ``timings`` gets
    ``wikipedia_ms`` and ``disambiguation_ms``."""
    if backend is None:
        return [], SourceStatus(name="wikipedia", status="disabled", detail="turned off")
    if not chosen:
        return [], SourceStatus(name=backend.name, status="skipped", detail="no keywords")
    t = time.perf_counter()
    lookups = await asyncio.gather(
        *(backend.candidates(salience.entities[i].text, wiki.max_candidates) for i in chosen),
        return_exceptions=True,
    )
    failures = [o for o in lookups if isinstance(o, BaseException)]
    for failure in failures:
        if not isinstance(failure, SourceError | OSError):
            raise failure
    found: list[Sequence[WikiCandidate]] = [
        [] if isinstance(o, BaseException) else o for o in lookups
    ]
    requests = []
    for i, candidates in zip(chosen, found, strict=True):
        entity = salience.entities[i]
        names = [entity.text, *entity.variants]
        requests.append((salience.contexts[i], names, salience.context_vectors[i], candidates))
    d = time.perf_counter()
    choices = await asyncio.to_thread(choose_senses, requests, encoder, split_sentences)
    timings["disambiguation_ms"] = _ms(time.perf_counter() - d)
    entries = []
    for i, choice, candidates in zip(chosen, choices, found, strict=True):
        if choice is None:
            continue
        c = choice.candidate
        entries.append(
            WikipediaEntry(
                keyword=salience.entities[i].text,
                title=c.title,
                url=c.url,
                text=first_sentences(c.extract, wiki.sentences, split_sentences),
                description=c.description,
                score=round(choice.score, 6),
                candidates=[x.title for x in candidates],
                source=backend.name,
            )
        )
    elapsed = time.perf_counter() - t
    timings["wikipedia_ms"] = _ms(elapsed)
    if failures and len(failures) == len(chosen):
        return entries, SourceStatus(
            name=backend.name,
            status="failed",
            detail=source_failure(failures[0]),
            elapsed_ms=_ms(elapsed),
        )
    detail = (
        f"{len(failures)} of {len(chosen)} lookups failed: {source_failure(failures[0])}"
        if failures
        else ""
    )
    missing = sum(1 for c in found if not c)
    if missing and not failures:
        detail = f"{missing} of {len(chosen)} keywords have no article"
    return entries, SourceStatus(
        name=backend.name,
        status="ok" if entries else "empty",
        detail=detail,
        results=len(entries),
        elapsed_ms=_ms(elapsed),
    )
