"""The plain scores of predictions against gold labels: accuracy, per-class
precision, recall and F1, and macro-F1. A prediction of ``None`` is a miss."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

__all__ = ["ClassScores", "Labels", "accuracy", "class_scores", "macro_f1"]

Labels = Sequence[str | None]


class ClassScores(BaseModel):
    model_config = ConfigDict(extra="forbid")

    precision: float
    recall: float
    f1: float
    support: int


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
