"""The progress of one check as events for the caller's hook: started and finished
stages with a one-line summary, debate rounds, timings."""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from .post import ProgressEvent, ProgressHook
from .records.stage1 import Stage1Result
from .report import EvidenceItem, ExpertFinding, Report
from .text import counted

__all__ = ["Progress"]

log = logging.getLogger(__name__)
T = TypeVar("T")
#: a failed step in the progress message (what failed is in the log and the report)
_FAILED = "failed; the check goes on without it"


class Progress:
    """Sends events to the caller's hook; a failing hook is logged, never fatal."""

    def __init__(self, hook: ProgressHook | None, started: float) -> None:
        self.hook = hook
        self.started = started

    async def emit(
        self,
        kind: str,
        stage: str,
        detail: str = "",
        round_no: int | None = None,
        report: Report | None = None,
    ) -> None:
        if self.hook is None:
            return
        event = ProgressEvent(
            kind=kind,
            stage=stage,
            detail=detail,
            round=round_no,
            elapsed_ms=round((time.perf_counter() - self.started) * 1000, 1),
            report=report,
        )
        try:
            result = self.hook(event)
            if inspect.isawaitable(result):
                await result
        except Exception:  # a display problem must not lose the check
            log.exception("progress hook failed on %s", event)

    async def stage(self, name: str, work: Awaitable[T], timings: dict[str, float]) -> T:
        """Await ``work`` between started/finished events, timing it as ``<name>_ms``."""
        await self.emit("started", name)
        t = time.perf_counter()
        result = await work
        timings[f"{name}_ms"] = round((time.perf_counter() - t) * 1000, 2)
        if isinstance(result, ExpertFinding) and result.status == "failed":
            # What failed (a backend's words: hosts, ports, error bodies) goes to the log
            # and stays in the report; the progress says only that the step failed.
            log.warning("step %s failed: %s", name, result.error)
        await self.emit("finished", name, _summary(result))
        return result


def _summary(result: Any) -> str:
    """A finished step's result in a few plain words, for the progress message: what
    a failed step's error said is never among them."""
    if isinstance(result, Stage1Result):
        documents = len(result.web) + len(result.wikipedia)
        return f"{counted(len(result.keywords), 'keyword')}, {counted(documents, 'document')}"
    if isinstance(result, list) and result and isinstance(result[0], EvidenceItem):
        checks = sum(1 for item in result if item.source == "factcheck")
        stances = sum(1 for item in result if item.stance is not None)
        return f"{counted(checks, 'published fact-check')}, {counted(stances, 'stance')}"
    if isinstance(result, list):
        done = sum(1 for r in result if getattr(r, "status", "ok") == "ok")
        return f"{done} of {len(result)} done" if result else ""
    claims = getattr(result, "claims", None)  # the claims step: flat, or a tree's nodes
    if isinstance(claims, list):
        settled = sum(1 for c in claims if c.label in ("supports", "refutes"))
        return f"{settled} of {counted(len(claims), 'claim')} settled"
    if isinstance(result, ExpertFinding):
        return result.expert_role if result.status == "ok" else _FAILED
    return ""
