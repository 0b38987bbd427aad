"""Looking a post up among published fact-checks, and keeping only the reviews of the
same claim.

A fact-check search matches words, so it also returns reviews of other claims about
the same people. A review counts only when the shared sentence encoder puts its claim
close enough to one of the texts looked up (``[factcheck] min_similarity``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Sequence

import numpy as np

from ...errors import SourceError
from ...ports import TextEncoder
from ...records.stage1 import SourceStatus
from ..web.search import source_failure
from .base import FactCheck, FactCheckBackend, FactCheckQuery

__all__ = ["FactCheckLookup", "Matched"]

Matched = tuple[FactCheck, float]


class FactCheckLookup:
    """Every configured fact-check backend, searched at once.

    Args:
        backends: the backends (none: offline).
        encoder: the sentence encoder that judges whether a review is of the same claim.
        min_similarity: the cosine a review's claim must reach to a looked-up text.
        max_results: reviews asked for per text and kept in all.
    """

    def __init__(
        self,
        backends: Sequence[FactCheckBackend],
        encoder: TextEncoder,
        *,
        min_similarity: float = 0.6,
        max_results: int = 5,
    ) -> None:
        self.backends = list(backends)
        self.encoder = encoder
        self.min_similarity = min_similarity
        self.max_results = max_results

    async def find(
        self, texts: Sequence[str], *, language: str = "", cutoff: dt.date | None = None
    ) -> tuple[list[Matched], list[SourceStatus]]:
        """The reviews of the claims in ``texts``, best match first, each with its cosine;
        and each backend's status."""
        texts = [t.strip() for t in dict.fromkeys(texts) if t.strip()]
        if not self.backends:
            offline = SourceStatus(name="factcheck", status="disabled", detail="offline: none set")
            return [], [offline]
        if not texts:
            return [], [SourceStatus(name=b.name, status="skipped") for b in self.backends]
        started = time.perf_counter()
        queries = [
            FactCheckQuery(t, language=language, cutoff=cutoff, max_results=self.max_results)
            for t in texts
        ]
        jobs = [(backend, query) for backend in self.backends for query in queries]
        outcomes = await asyncio.gather(
            *(backend.search(query) for backend, query in jobs), return_exceptions=True
        )
        elapsed = round((time.perf_counter() - started) * 1000, 2)
        found: list[FactCheck] = []
        failures: dict[str, str] = {}
        for (backend, _), outcome in zip(jobs, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, SourceError | OSError):
                    raise outcome  # a bug, not a source's failure
                failures.setdefault(backend.name, source_failure(outcome))
            else:
                found.extend(outcome)
        matched = await asyncio.to_thread(self._matching, found, texts)
        statuses = [
            SourceStatus(name=b.name, status="failed", detail=failures[b.name], elapsed_ms=elapsed)
            if b.name in failures
            else SourceStatus(
                name=b.name,
                status="ok" if matched else "empty",
                results=len(matched),
                elapsed_ms=elapsed,
            )
            for b in self.backends
        ]
        return matched, statuses

    def _matching(self, found: list[FactCheck], texts: list[str]) -> list[Matched]:
        unique = list({review.url: review for review in found}.values())
        if not unique:
            return []
        vectors = self.encoder.encode([r.claim or r.title for r in unique] + texts)
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        sims = vectors[: len(unique)] @ vectors[len(unique) :].T
        best = sims.max(axis=1)
        kept = [
            (review, round(float(score), 4))
            for review, score in zip(unique, best, strict=True)
            if score >= self.min_similarity
        ]
        kept.sort(key=lambda pair: -pair[1])
        return kept[: self.max_results]

    async def aclose(self) -> None:
        for backend in self.backends:
            await backend.aclose()
