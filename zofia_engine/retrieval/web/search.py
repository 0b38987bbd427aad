"""Searching every configured web backend at once, and reporting each one's outcome."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Sequence

from ...errors import SourceError
from ...records.stage1 import SourceStatus, WebResult
from .base import SearchBackend, WebQuery

__all__ = ["search_all", "source_failure"]


async def search_all(
    backends: Sequence[SearchBackend],
    query: WebQuery,
    timings: dict[str, float],
    *,
    label: str = "",
) -> tuple[list[WebResult], list[SourceStatus]]:
    """Run ``query`` on every backend at once; their results interleaved (first URL
    wins, at most ``query.max_results``), and each backend's status. A backend that
    fails is a status, not an error; ``timings["web_ms"]`` is the wall time. A
    ``label`` (``"counter"``) suffixes the status names and the timing key."""
    suffix = f" ({label})" if label else ""
    if not backends:
        return [], [SourceStatus(name="web", status="disabled", detail="offline: none set")]
    if not query.keywords:
        return [], [
            SourceStatus(name=b.name + suffix, status="skipped", detail="no query")
            for b in backends
        ]
    t = time.perf_counter()
    outcomes = await asyncio.gather(
        *(_timed(b.search(query)) for b in backends), return_exceptions=True
    )
    timings[f"{label or 'web'}_ms"] = _ms(time.perf_counter() - t)
    statuses: list[SourceStatus] = []
    lists: list[list[WebResult]] = []
    for backend, outcome in zip(backends, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, SourceError | OSError):
                raise outcome
            statuses.append(
                SourceStatus(
                    name=backend.name + suffix, status="failed", detail=source_failure(outcome)
                )
            )
            continue
        results, elapsed = outcome
        lists.append(results)
        statuses.append(
            SourceStatus(
                name=backend.name + suffix,
                status="ok" if results else "empty",
                results=len(results),
                elapsed_ms=_ms(elapsed),
            )
        )
    return _interleave(lists, query.max_results), statuses


def source_failure(exc: BaseException) -> str:
    """A failure in words, without repeating the source's name."""
    return exc.detail if isinstance(exc, SourceError) else f"{type(exc).__name__}: {exc}"


async def _timed(awaitable: Awaitable[list[WebResult]]) -> tuple[list[WebResult], float]:
    t = time.perf_counter()
    results = await awaitable
    return results, time.perf_counter() - t


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def _interleave(lists: list[list[WebResult]], limit: int) -> list[WebResult]:
    """Round-robin over the backends' lists, first URL wins, at most ``limit``."""
    merged: list[WebResult] = []
    seen: set[str] = set()
    for rank in range(max((len(x) for x in lists), default=0)):
        for results in lists:
            if rank < len(results) and results[rank].url not in seen:
                seen.add(results[rank].url)
                merged.append(results[rank])
    return merged[:limit]
