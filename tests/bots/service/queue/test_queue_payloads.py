"""Notifications carry ids and a progress step's few short fields, never what a check
ended with (it is read from the store): a payload stays far under PostgreSQL's 8,000
bytes whatever a check's failure or a judge's call says. The payload is parsed back
by the listener's own parser."""

from __future__ import annotations

import json

from bots.service.queue.events import MAX_FIELD, CheckEvent, payload
from zofia_engine.post import ProgressEvent


def test_an_ending_is_announced_by_its_id_alone() -> None:
    text = payload("check-1", "failed", {"error": "x" * 50_000})
    assert json.loads(text) == {"check": "check-1", "kind": "failed"}
    event = CheckEvent.parse(text)
    assert event is not None and event.kind == "failed" and event.event == {}


def test_a_progress_step_is_cut_to_its_short_fields() -> None:
    step = ProgressEvent(kind="round", stage="debate" * 100, detail="é" * 10_000, round=3)
    raw = {**step.model_dump(), "extra": "y" * 10_000}
    text = payload("check-2", "progress", raw)
    assert len(text.encode()) < 1000
    event = CheckEvent.parse(text)
    assert event is not None
    parsed = ProgressEvent.model_validate(event.event)  # what the service does with it
    assert parsed.round == 3 and parsed.detail == "é" * MAX_FIELD
    assert parsed.stage == ("debate" * 100)[:MAX_FIELD]
