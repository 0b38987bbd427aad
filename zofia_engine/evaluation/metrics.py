"""Verdict quality and cost: pure functions over gold and predicted labels.

A prediction of ``None`` (the engine said ``undetermined``, or the item
failed) is a miss: it counts against the gold class's recall and against no
class's precision, and the confusion matrix shows it in a ``none`` column.
Macro-F1 averages the F1 of the mapping's classes that occur in the gold
labels or the predictions (as scikit-learn does), with 0 where undefined.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from .abstention import Selective
from .scores import ClassScores, accuracy, class_scores, macro_f1

__all__ = [
    "NONE_COLUMN",
    "ClassScores",
    "Interval",
    "Metrics",
    "accuracy",
    "bootstrap_interval",
    "class_scores",
    "confusion_matrix",
    "macro_f1",
    "score",
]

NONE_COLUMN = "none"

Labels = Sequence[str | None]


class Interval(BaseModel):
    """A bootstrap percentile interval."""

    model_config = ConfigDict(extra="forbid")

    low: float
    high: float
    level: float = 0.95
    resamples: int = 0


class Metrics(BaseModel):
    """Everything ``zofia eval`` reports about one run.

    ``confusion[gold][predicted]`` counts items; ``predicted`` runs over the
    classes and ``none`` (undetermined or failed).
    """

    model_config = ConfigDict(extra="forbid")

    items: int
    accuracy: float
    macro_f1: float
    accuracy_ci: Interval | None = None
    macro_f1_ci: Interval | None = None
    classes: list[str]
    per_class: dict[str, ClassScores]
    confusion: dict[str, dict[str, int]]
    undetermined: int = 0
    errors: int = 0
    mean_llm_calls: float = 0.0
    mean_prompt_tokens: float = 0.0
    mean_completion_tokens: float = 0.0
    mean_wall_s: float = 0.0
    selective: Selective | None = None
    # ``zofia eval --repeat K``: runs per item, and the share of items whose runs agree
    repeat: int = 1
    agreement: float | None = None


def confusion_matrix(
    gold: Sequence[str], predicted: Labels, classes: Sequence[str]
) -> dict[str, dict[str, int]]:
    """Counts of (gold, predicted) pairs; rows are ``classes``, columns add ``none``."""
    columns = [*classes, NONE_COLUMN]
    matrix = {g: dict.fromkeys(columns, 0) for g in classes}
    for g, p in zip(gold, predicted, strict=True):
        matrix[g][p if p is not None and p in classes else NONE_COLUMN] += 1
    return matrix


def bootstrap_interval(
    gold: Sequence[str],
    predicted: Labels,
    statistic: Callable[[Sequence[str], Labels], float],
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval | None:
    """Percentile bootstrap interval of ``statistic``: items resampled with
    replacement ``resamples`` times with numpy's ``default_rng(seed)``.
    ``None`` for no items or no resamples."""
    n = len(gold)
    if n == 0 or resamples <= 0:
        return None
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(resamples, n))
    values = np.array(
        [statistic([gold[i] for i in row], [predicted[i] for i in row]) for row in draws]
    )
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(low=float(low), high=float(high), level=level, resamples=resamples)


def score(
    gold: Sequence[str],
    predicted: Labels,
    classes: Sequence[str],
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> Metrics:
    """Accuracy, macro-F1 (with bootstrap intervals), per-class scores and the matrix.

    The cost fields are left at 0; :func:`zofia_engine.evaluation.runner.summarise`
    fills them from the records.
    """
    classes = list(classes)

    def f1(g: Sequence[str], p: Labels) -> float:
        return macro_f1(g, p, classes)

    return Metrics(
        items=len(gold),
        accuracy=accuracy(gold, predicted),
        macro_f1=f1(gold, predicted),
        accuracy_ci=bootstrap_interval(gold, predicted, accuracy, resamples=resamples, seed=seed),
        macro_f1_ci=bootstrap_interval(gold, predicted, f1, resamples=resamples, seed=seed),
        classes=classes,
        per_class=class_scores(gold, predicted, classes),
        confusion=confusion_matrix(gold, predicted, classes),
    )
