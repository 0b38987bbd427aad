"""A running check's progress in words: one line per step, for every front-end."""

from __future__ import annotations

from collections.abc import Sequence

from zofia_engine.post import ProgressEvent

__all__ = ["STAGE_NAMES", "describe_event", "progress_lines"]

STAGE_NAMES = {
    "triage": "triage",
    "retrieval": "entity-guided retrieval",
    "linguist": "linguist (5 dimensions)",
    "expert": "domain expert",
    "claims": "claim verification",
    "evidence": "fact-checks and sources",
    "debate": "debate",
    "verdict": "verdict",
}
_MARKS = {"finished": "✓", "failed": "✗", "round": "•"}


def describe_event(event: ProgressEvent) -> str:
    """One line for a progress event: ``debate round 2: judge says continue``."""
    name = STAGE_NAMES.get(event.stage, event.stage)
    if event.kind == "round":
        return f"debate round {event.round}: judge says {event.detail}"
    detail = f" ({event.detail})" if event.detail else ""
    return f"{name} {event.kind}{detail}"


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
