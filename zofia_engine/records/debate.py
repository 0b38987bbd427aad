"""The debate's records: each turn, each ruling of the judge, and the transcript, with
the outcomes the panel rules on."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

__all__ = ["Debate", "DebateTurn", "JudgeRuling", "Outcome", "StepStatus", "modern"]

#: What the panel rules on: RADAR's half-true is ``misleading`` (right in its facts, but
#: missing context that changes its meaning) and AgentFact's ``unproven`` (absence of
#: evidence does not imply falsity).
Outcome = Literal["true", "false", "misleading", "unproven"]
#: How a step of the check ended.
StepStatus = Literal["ok", "failed", "skipped"]
# Reports stored before the four outcomes said ZoFia's real / fake.
_LEGACY = {"real": "true", "fake": "false"}


def modern(value: object) -> object:
    """An outcome as the report names it today (``real`` and ``fake`` were ZoFia's)."""
    return _LEGACY.get(value, value) if isinstance(value, str) else value


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DebateTurn(_Record):
    """One debater's turn. In ZoFia's debate (``pro``, ``con``) a rebuttal of the last
    opposing turn, then new evidence; in RADAR's (``politician``, ``scientist``) the
    argument of one ``phase``: opening, rebuttal or closing. A part that repeated what
    the debate had already shown is left empty; ``repeated`` marks a turn with nothing
    new to show."""

    round: int
    side: Literal["pro", "con", "politician", "scientist"]
    phase: Literal["opening", "rebuttal", "closing"] | None = None
    rebuttal: str = ""
    argument: str = ""
    cites: list[str] = []
    repeated: bool = False
    status: StepStatus = "ok"
    error: str = ""


class JudgeRuling(_Record):
    """The judge's answer after a round: the ``outcome`` it would give now, and as the
    ``decision`` that outcome when the debate stops here or ``continue``. ``forced`` marks the
    ruling made at the round cap. ``stop_margin`` is RADAR's s = p(STOP) − p(CONTINUE)
    and ``label_confidence`` its c = max p(outcome), both from the judge's token
    probabilities (``None`` without them); ``probabilities`` are p(outcome) for each
    of the four outcomes."""

    round: int
    decision: Literal["true", "false", "misleading", "unproven", "continue"] | None
    outcome: Outcome | None = None
    reason: str = ""
    forced: bool = False
    stop_margin: float | None = None
    label_confidence: float | None = None
    probabilities: dict[str, float] | None = None
    status: StepStatus = "ok"
    error: str = ""

    @field_validator("decision", "outcome", mode="before")
    @classmethod
    def _legacy(cls, value: object) -> object:
        return modern(value)


class Debate(_Record):
    """The debate's transcript: ZoFia's Algorithm 1 or RADAR's role-anchored debate.
    ``forced`` is true when the judge never decided on its own; ``stopped_by`` says
    what ended it early: the token probabilities against the thresholds, or (without
    them) the judge's word; a round in which both sides only repeated themselves
    (``repetition``); or, before it began, that no claim was settled by the evidence, so
    that one round was held for the panel's lean (``no_evidence``), or that the evidence
    settled the core claim, so that one round was held to explain it (``settled``)."""

    style: Literal["zofia", "radar"] = "zofia"
    stopped_by: Literal["", "probabilities", "judge", "repetition", "no_evidence", "settled"] = ""
    turns: list[DebateTurn] = []
    rulings: list[JudgeRuling] = []
    rounds: int = 0
    max_rounds: int = 0
    decided_in_round: int | None = None
    forced: bool = False
    held: bool = True

    def timeline(self) -> list[DebateTurn | JudgeRuling]:
        """The debate in the order it happened: each round's turns, then that round's
        ruling (a forced ruling at the cap comes last)."""
        ordered: list[tuple[int, int, DebateTurn | JudgeRuling]] = [
            (turn.round, order, turn) for order, turn in enumerate(self.turns)
        ]
        ordered += [
            (ruling.round, len(self.turns) + order, ruling)
            for order, ruling in enumerate(self.rulings)
        ]
        ordered.sort(key=lambda entry: entry[:2])
        return [entry for *_, entry in ordered]
