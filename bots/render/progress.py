"""A running check's progress in words, one line per step, and the one follower that
shows it on every front-end.

:func:`follow_progress` shows the lines one edit at a time, at most one every
``interval_s``, each showing the latest state: events that arrive while an edit is on
its way are folded into the next one, so a slow chat never falls behind and edits
never overtake each other.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from zofia_engine.post import ProgressEvent

__all__ = ["STAGE_NAMES", "describe_event", "follow_progress", "progress_lines"]

STAGE_NAMES = {
    "triage": "triage",
    "retrieval": "entity-guided retrieval",
    "linguist": "linguist (5 dimensions)",
    "expert": "domain expert",
    "claims": "claim verification",
    "search": "searching again",
    "evidence": "fact-checks and sources",
    "debate": "debate",
    "verdict": "verdict",
}
_MARKS = {"finished": "✓", "failed": "✗", "round": "•", "verdict_ready": "✓"}


def describe_event(event: ProgressEvent) -> str:
    """One line for a progress event: ``debate round 2: judge says false``."""
    name = STAGE_NAMES.get(event.stage, event.stage)
    if event.kind == "round" and event.detail == "continue":
        return f"debate round {event.round}: the judge asks for another round"
    if event.kind == "round":
        return f"debate round {event.round}: judge says {event.detail}"
    if event.kind == "verdict_ready":
        return f"verdict: {event.detail}; the panel is writing its explanation"
    detail = event.detail
    return f"{name} {event.kind}" + (f" ({detail})" if detail else "")


def progress_lines(events: Sequence[ProgressEvent]) -> list[str]:
    """One line per finished step, and the step now running last, e.g.
    ``✓ entity-guided retrieval finished (7 entities, 12 documents)``."""
    lines = []
    running: dict[str, ProgressEvent] = {}
    for event in events:
        if event.kind == "started":
            running[event.stage] = event
            continue
        if event.kind != "round":
            running.pop(event.stage, None)
        lines.append(f"{_MARKS[event.kind]} {describe_event(event)}")
    lines.extend(f"… {describe_event(event)}" for event in running.values())
    return lines


async def follow_progress(
    events: AsyncIterator[ProgressEvent],
    show: Callable[[list[str]], Awaitable[bool]],
    interval_s: float,
) -> None:
    """Show ``events`` (as :func:`progress_lines`) with ``show`` until they end; the
    last edit is done, or queued, when this returns (Telegram's ``show`` queues its edit
    for the chat's turn, and the next state, or the card, drops it while it waits: see
    :mod:`bots.telegram.pacing`).

    Args:
        events: a check's events, e.g. :meth:`bots.service.handles.CheckHandle.events`, which
            end with the run or when the requester's own outcome is settled.
        show: shows the lines; ``False`` once nothing more can be shown (the events are
            still read to their end).
        interval_s: the least time between two edits.
    """
    seen: list[ProgressEvent] = []
    changed, closing = asyncio.Event(), asyncio.Event()

    async def edit() -> None:
        shown: list[str] = []
        while True:
            await changed.wait()
            if closing.is_set():
                return
            changed.clear()
            lines = progress_lines(seen)
            if lines != shown:
                if not await show(lines):
                    return
                shown = lines
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval_s):
                    await closing.wait()

    editor = asyncio.get_running_loop().create_task(edit())
    try:
        async for event in events:
            seen.append(event)
            changed.set()
    finally:
        closing.set()
        changed.set()
        await editor
