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

from .words import ENGLISH, N_, Words

__all__ = ["STAGE_NAMES", "describe_event", "follow_progress", "progress_lines"]

#: a step of a check, in words (said in the chat's language with ``words(...)``)
STAGE_NAMES = {
    "triage": N_("triage"),
    "retrieval": N_("entity-guided retrieval"),
    "linguist": N_("linguist (5 dimensions)"),
    "expert": N_("domain expert"),
    "claims": N_("claim verification"),
    "search": N_("searching again"),
    "evidence": N_("fact-checks and sources"),
    "debate": N_("debate"),
    "verdict": N_("verdict"),
}
_MARKS = {"finished": "✓", "failed": "✗", "round": "•", "verdict_ready": "✓"}
#: a step's line by what happened to it
_STEP_LINES = {
    "started": N_("{step} started"),
    "finished": N_("{step} finished"),
    "failed": N_("{step} failed"),
}


def describe_event(event: ProgressEvent, words: Words = ENGLISH) -> str:
    """One line for a progress event: ``debate round 2: judge says false``, in ``words``
    (the engine's own detail, "7 entities, 12 documents", is shown as it wrote it)."""
    name = words(STAGE_NAMES[event.stage]) if event.stage in STAGE_NAMES else event.stage
    if event.kind == "round" and event.detail == "continue":
        return words("debate round {round}: the judge asks for another round", round=event.round)
    if event.kind == "round":
        return words(
            "debate round {round}: judge says {call}", round=event.round, call=event.detail
        )
    if event.kind == "verdict_ready":
        return words(
            "verdict: {verdict}; the panel is writing its explanation", verdict=event.detail
        )
    line = words(_STEP_LINES[event.kind], step=name)
    return line + (f" ({event.detail})" if event.detail else "")


def progress_lines(events: Sequence[ProgressEvent], words: Words = ENGLISH) -> list[str]:
    """One line per finished step, and the step now running last, e.g.
    ``✓ entity-guided retrieval finished (7 entities, 12 documents)``, in ``words``."""
    lines = []
    running: dict[str, ProgressEvent] = {}
    for event in events:
        if event.kind == "started":
            running[event.stage] = event
            continue
        if event.kind != "round":
            running.pop(event.stage, None)
        lines.append(f"{_MARKS[event.kind]} {describe_event(event, words)}")
    lines.extend(f"… {describe_event(event, words)}" for event in running.values())
    return lines


async def follow_progress(
    events: AsyncIterator[ProgressEvent],
    show: Callable[[list[str]], Awaitable[bool]],
    interval_s: float,
    words: Words = ENGLISH,
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
        words: the chat's words, the lines' language.
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
            lines = progress_lines(seen, words)
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
