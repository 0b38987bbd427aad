"""Choosing RADAR's early-stop thresholds for a model (RADAR App. C), and measuring
whether contextual calibration helps its confidence.

The dev items are checked once with every round held; each round's stop margin s,
label confidence c and outcome are cached with the final verdict and its
probabilities. A grid search then replays the controller offline for every pair
(τs, τv): an item stops at the first round with s ≥ τs and c ≥ τv and takes that
round's outcome, else it takes the final verdict. The best pair has the highest
accuracy; among pairs within half a point of it, the fewest rounds on average.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..agents.judge import calibrated
from ..report import OUTCOMES, Report
from .abstention import Judged, selective
from .dataset import LabelMapping

__all__ = [
    "GridPoint",
    "ItemScores",
    "RoundScore",
    "calibration_effect",
    "grid_search",
    "read_scores",
    "scores_of",
]

TAU_S = tuple(round(x, 2) for x in np.arange(-1.0, 1.0001, 0.05))
TAU_V = tuple(round(x, 2) for x in np.arange(0.0, 1.0001, 0.05))
NEAR_BEST = 0.005


class RoundScore(BaseModel):
    """What the judge said after one round."""

    model_config = ConfigDict(extra="forbid")

    round: int
    stop_margin: float | None
    label_confidence: float | None
    outcome: str | None


class ItemScores(BaseModel):
    """One dev item: its gold class, every round's scores and the final verdict."""

    model_config = ConfigDict(extra="forbid")

    id: str
    gold: str
    rounds: list[RoundScore]
    final: str | None
    final_probabilities: dict[str, float] | None = None


class GridPoint(BaseModel):
    """One threshold pair replayed over the dev items."""

    model_config = ConfigDict(extra="forbid")

    stop_margin: float
    verdict_confidence: float
    accuracy: float
    mean_rounds: float
    stopped_early: int


def scores_of(item_id: str, gold: str, report: Report) -> ItemScores:
    """The cached scores of a check made with every round held."""
    rounds = [
        RoundScore(
            round=r.round,
            stop_margin=r.stop_margin,
            label_confidence=r.label_confidence,
            outcome=r.outcome,
        )
        for r in report.debate.rulings
        if not r.forced
    ]
    final = next((r for r in reversed(report.debate.rulings) if r.forced), None)
    return ItemScores(
        id=item_id,
        gold=gold,
        rounds=rounds,
        final=final.outcome if final is not None else None,
        final_probabilities=final.probabilities if final is not None else None,
    )


def read_scores(path: Path) -> list[ItemScores]:
    """The cached scores of ``path`` (JSONL, one item a line; the last line per id wins)."""
    found: dict[str, ItemScores] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = ItemScores.model_validate(json.loads(line))
            found[item.id] = item
    return list(found.values())


def _replay(item: ItemScores, tau_s: float, tau_v: float) -> tuple[str | None, int, bool]:
    for score in item.rounds:
        s, c = score.stop_margin, score.label_confidence
        if s is not None and c is not None and s >= tau_s and c >= tau_v:
            return score.outcome, score.round, True
    return item.final, len(item.rounds) + 1, False


def grid_search(
    items: Sequence[ItemScores],
    mapping: LabelMapping,
    tau_s: Iterable[float] = TAU_S,
    tau_v: Iterable[float] = TAU_V,
) -> tuple[GridPoint, list[GridPoint]]:
    """Every pair replayed: the best one (see the module's docstring), and all of them,
    best first (those near the top accuracy in order of preference, then the rest)."""
    points = []
    for s in tau_s:
        for v in tau_v:
            right, rounds, early = 0, 0, 0
            for item in items:
                outcome, used, stopped = _replay(item, s, v)
                right += outcome is not None and mapping.predicted(outcome) == item.gold
                rounds += used
                early += stopped
            n = len(items) or 1
            points.append(
                GridPoint(
                    stop_margin=s,
                    verdict_confidence=v,
                    accuracy=right / n,
                    mean_rounds=rounds / n,
                    stopped_early=early,
                )
            )
    top = max(p.accuracy for p in points)
    near = [p for p in points if p.accuracy >= top - NEAR_BEST]
    best = min(near, key=_preference)
    return best, sorted(points, key=lambda p: (p not in near, *_preference(p)))


def _preference(p: GridPoint) -> tuple[float, ...]:
    return (p.mean_rounds, -p.accuracy, -p.stop_margin, -p.verdict_confidence)


def calibration_effect(
    items: Sequence[ItemScores], prior: dict[str, float], mapping: LabelMapping
) -> tuple[float | None, float | None]:
    """The expected calibration error of the final verdicts' confidence, as the judge
    gave it and after contextual calibration by ``prior`` (its answer on a
    content-free post): ``(before, after)``."""
    classes = list(mapping.classes)
    plain, corrected = [], []
    for item in items:
        if item.final is None or not item.final_probabilities:
            continue
        probabilities: dict[str, float] = {
            o: item.final_probabilities.get(o, 0.0) for o in OUTCOMES
        }
        fixed = calibrated(probabilities, prior)
        best = max(fixed, key=lambda o: fixed[o])
        plain.append(Judged(item.gold, mapping.predicted(item.final), probabilities[item.final]))
        corrected.append(Judged(item.gold, mapping.predicted(best), fixed[best]))
    return selective(plain, classes).ece, selective(corrected, classes).ece
