"""Scoring a checker that may abstain: coverage, risk and calibration.

A fact-checker that says "unproven" when the evidence does not settle a post is
abstaining, and should be scored as such (selective prediction): how many items it
answered (coverage), how right it was on those, how often it was wrong while sure
of itself, how risk falls as it answers less, and whether its confidence means
what it says (a reliability table and the expected calibration error, ECE).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from .scores import accuracy, macro_f1

__all__ = [
    "CONFIDENT",
    "THRESHOLDS",
    "Bin",
    "Judged",
    "RiskPoint",
    "Selective",
    "selective",
]

#: "Confidently wrong": a wrong verdict at this confidence or above.
CONFIDENT = 0.7
#: The confidence thresholds of the risk-coverage curve.
THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9)
_BINS = 5


@dataclass(frozen=True)
class Judged:
    """One item as scored: its gold class, the class predicted (``None``: abstained or
    failed), the confidence of the verdict (``None``: unknown), and whether triage
    skipped it as not a claim."""

    gold: str
    predicted: str | None
    confidence: float | None
    skipped: bool = False


class RiskPoint(BaseModel):
    """Answering only at ``threshold`` confidence or above: the share of items answered
    and the share of those that are wrong."""

    model_config = ConfigDict(extra="forbid")

    threshold: float
    coverage: float
    risk: float | None


class Bin(BaseModel):
    """Verdicts whose confidence falls in [low, high): how many, how sure, how right."""

    model_config = ConfigDict(extra="forbid")

    low: float
    high: float
    count: int
    confidence: float | None
    accuracy: float | None


class Selective(BaseModel):
    """How the checker did where it answered, and how its confidence holds up."""

    model_config = ConfigDict(extra="forbid")

    items: int
    covered: int
    coverage: float
    covered_accuracy: float | None
    covered_macro_f1: float | None
    confidently_wrong: float
    triage_skipped: int
    risk_coverage: list[RiskPoint]
    reliability: list[Bin]
    ece: float | None


def _bins(answered: Sequence[Judged]) -> tuple[list[Bin], float | None]:
    scored = [(j.confidence, j.predicted == j.gold) for j in answered if j.confidence is not None]
    bins, error = [], 0.0
    for k in range(_BINS):
        low, high = k / _BINS, (k + 1) / _BINS
        last = k == _BINS - 1  # the top bin holds a confidence of exactly 1.0 too
        inside = [(c, ok) for c, ok in scored if low <= c < high or (last and c == 1.0)]
        if not inside:
            bins.append(Bin(low=low, high=high, count=0, confidence=None, accuracy=None))
            continue
        mean = sum(c for c, _ in inside) / len(inside)
        right = sum(ok for _, ok in inside) / len(inside)
        bins.append(Bin(low=low, high=high, count=len(inside), confidence=mean, accuracy=right))
        error += len(inside) * abs(mean - right)
    return bins, (error / len(scored) if scored else None)


def selective(items: Sequence[Judged], classes: Sequence[str]) -> Selective:
    """The abstention-aware scores of ``items``."""
    n = len(items)
    answered = [j for j in items if j.predicted is not None]
    gold = [j.gold for j in answered]
    predicted = [j.predicted for j in answered]
    wrong_and_sure = sum(
        1
        for j in answered
        if j.predicted != j.gold and j.confidence is not None and j.confidence >= CONFIDENT
    )
    curve = []
    for t in THRESHOLDS:
        kept = [j for j in answered if (j.confidence or 0.0) >= t] if t > 0 else answered
        risk = sum(j.predicted != j.gold for j in kept) / len(kept) if kept else None
        curve.append(RiskPoint(threshold=t, coverage=len(kept) / n if n else 0.0, risk=risk))
    reliability, ece = _bins(answered)
    return Selective(
        items=n,
        covered=len(answered),
        coverage=len(answered) / n if n else 0.0,
        covered_accuracy=accuracy(gold, predicted) if answered else None,
        covered_macro_f1=macro_f1(gold, predicted, classes) if answered else None,
        confidently_wrong=wrong_and_sure / n if n else 0.0,
        triage_skipped=sum(1 for j in items if j.skipped),
        risk_coverage=curve,
        reliability=reliability,
        ece=ece,
    )
