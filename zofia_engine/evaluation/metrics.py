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


class ClassScores(BaseModel):
    model_config = ConfigDict(extra="forbid")

    precision: float
    recall: float
    f1: float
    support: int


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


def confusion_matrix(
    gold: Sequence[str], predicted: Labels, classes: Sequence[str]
) -> dict[str, dict[str, int]]:
    """Counts of (gold, predicted) pairs; rows are ``classes``, columns add ``none``."""
    columns = [*classes, NONE_COLUMN]
    matrix = {g: dict.fromkeys(columns, 0) for g in classes}
    for g, p in zip(gold, predicted, strict=True):
        matrix[g][p if p is not None and p in classes else NONE_COLUMN] += 1
    return matrix


def accuracy(gold: Sequence[str], predicted: Labels) -> float:
    """Share of items predicted right; ``None`` is wrong. 0 for no items."""
    if not gold:
        return 0.0
    return sum(1 for g, p in zip(gold, predicted, strict=True) if g == p) / len(gold)


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


def class_scores(
    gold: Sequence[str], predicted: Labels, classes: Sequence[str]
) -> dict[str, ClassScores]:
    """Precision, recall, F1 and support of each class (0 where undefined)."""
    scores = {}
    for c in classes:
        tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g == c and p == c)
        said = sum(1 for p in predicted if p == c)
        support = sum(1 for g in gold if g == c)
        precision, recall = _ratio(tp, said), _ratio(tp, support)
        f1 = _ratio(2 * tp, said + support)
        scores[c] = ClassScores(precision=precision, recall=recall, f1=f1, support=support)
    return scores


def macro_f1(gold: Sequence[str], predicted: Labels, classes: Sequence[str]) -> float:
    """Mean F1 over the ``classes`` seen in ``gold`` or ``predicted``."""
    present = [c for c in classes if c in gold or c in predicted]
    if not present:
        return 0.0
    scores = class_scores(gold, predicted, present)
    return sum(s.f1 for s in scores.values()) / len(present)


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
