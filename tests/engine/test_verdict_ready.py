"""The verdict first: when the read evidence fixes the verdict, the engine reports it
(``verdict_ready``, with the early report) before the debate, and the final report
never says otherwise. Scripted paths at the scripted backend (as in
``test_engine_logic.py``): they prove when the early verdict goes out for a given
reading of the evidence, and that the judge cannot change it, not that a model reads
the evidence that way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.engine.test_engine import POST, UNSETTLED
from tests.engine.test_engine_logic import (
    ADAPTIVE,
    _settings,
    make_engine,
    panel,
    sub_claims_refuted,
)
from tests.peers.fakes.panel_script import ScriptedPanel
from tests.peers.fixtures.engine_setup import script

from zofia_engine.engine import Engine
from zofia_engine.post import ProgressEvent
from zofia_engine.report import Report

pytest_plugins = ["tests.peers.fixtures.search_fixtures", "tests.peers.fixtures.model_fixtures"]
__all__ = ["make_engine", "panel"]  # the fixtures, shared with test_engine_logic


async def _checked(engine: Engine) -> tuple[Report, list[ProgressEvent]]:
    events: list[ProgressEvent] = []
    report = await engine.check(POST, on_progress=events.append)
    return report, events


def _early(events: list[ProgressEvent]) -> Report | None:
    ready = [e for e in events if e.kind == "verdict_ready"]
    assert len(ready) <= 1
    return ready[0].report if ready else None


def _same_card(early: Report, final: Report) -> None:
    """What the early card shows is what the final card shows."""
    assert early.verdict == final.verdict and early.summary == final.summary
    assert early.confidence.value == final.confidence.value
    assert [e.id for e in early.evidence] == [e.id for e in final.evidence]
    assert not early.complete and final.complete


@pytest.mark.parametrize("depth", ["adaptive", "full"])
async def test_a_refuted_core_claim_is_shown_before_the_debate_begins(
    panel: ScriptedPanel, make_engine: Callable[..., Engine], depth: str
) -> None:
    script(panel)  # every claim refuted by a sentence of the evidence
    settings = _settings(panel, {"agents": {"depth": depth}})
    report, events = await _checked(make_engine(settings))
    early = _early(events)
    assert early is not None and early.verdict == "false"
    _same_card(early, report)
    assert early.debate.turns == [] and report.debate.turns  # the debate came after
    steps = [(e.kind, e.stage) for e in events]
    assert steps.index(("verdict_ready", "verdict")) < steps.index(("started", "debate"))
    assert "verdict_ms" in report.timings and "verdict_ms" in early.timings


async def test_a_judge_ruling_against_the_early_verdict_does_not_change_it(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    true = {"verdict": "true", "reason": "The post is right."}
    script(panel, finalreply=true, judgereply={**true, "next": "stop"})
    report, events = await _checked(make_engine(_settings(panel, ADAPTIVE)))
    early = _early(events)
    assert early is not None and early.verdict == "false"
    _same_card(early, report)
    assert report.lean is not None and report.lean.outcome == "true"  # kept as a lean


async def test_a_judge_that_fails_leaves_the_verdict_the_evidence_fixed(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    broken = {"no verdict": "at all"}
    script(panel, finalreply=broken, judgereply=broken)
    report, events = await _checked(make_engine(_settings(panel, ADAPTIVE)))
    early = _early(events)
    assert early is not None
    _same_card(early, report)
    assert report.verdict == "false"
    assert any(n.kind == "step_failed" and "judge" in n.text for n in report.notes)


async def test_nothing_settled_is_shown_unproven_early(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    final = {"verdict": "true", "reason": "The evidence provided supports the claim."}
    script(panel, readerreply=UNSETTLED, finalreply=final)
    report, events = await _checked(make_engine(_settings(panel, ADAPTIVE)))
    early = _early(events)
    assert early is not None and early.verdict == "unproven"
    _same_card(early, report)
    assert early.lean is None and report.lean is not None  # the lean comes with the debate


async def test_a_verdict_the_judge_still_chooses_waits_for_the_judge(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    # Sub-claims refuted, the core claim unsettled: false or misleading are both open.
    judge: dict[str, Any] = {"verdict": "false", "next": "stop", "reason": "Refuted parts."}
    script(panel, judgereply=judge, readerreply=sub_claims_refuted)
    report, events = await _checked(make_engine(_settings(panel, ADAPTIVE)))
    assert _early(events) is None and "verdict_ms" not in report.timings
    assert report.complete


async def test_the_early_verdict_is_off_with_the_papers_rule(
    panel: ScriptedPanel, make_engine: Callable[..., Engine]
) -> None:
    script(panel)
    sections = {"agents": {"depth": "adaptive", "require_evidence": False}}
    _, events = await _checked(make_engine(_settings(panel, sections)))
    assert _early(events) is None  # the judge's outcome stands: nothing is fixed before it
