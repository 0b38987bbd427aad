"""What ``bench/settle.py`` reports about verdicts: coverage, accuracy where it answered,
confidently wrong answers, macro-F1 with abstentions counted wrong, the calibration
error and its reliability table, the check times, and agreement over repeated runs; and
the reading calibration table it fits (``zofia_engine/data/reading_calibration.json``).

Pure functions over per-item records (``dict``: ``gold``, ``verdict``, ``confidence``,
``check_s``; for the calibration, ``core_label`` and ``restated``).
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from typing import Any

from zofia_engine.evaluation.scores import macro_f1

__all__ = [
    "ANSWERS",
    "CONFIDENT",
    "agreement",
    "calibration_table",
    "reliability",
    "verdict_metrics",
]

#: the verdicts that answer a true/false claim; the others abstain
ANSWERS = ("true", "false", "misleading")
#: a wrong answer at this confidence or more is "confidently wrong"
CONFIDENT = 0.7
BINS = 10

Record = dict[str, Any]


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _covered(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if r["verdict"] in ANSWERS]


def _right(record: Record) -> bool:
    return bool(record["verdict"] == record["gold"])


def reliability(records: Sequence[Record], bins: int = BINS) -> tuple[float, list[dict[str, Any]]]:
    """The expected calibration error of the covered answers' confidence (a missing one
    counts as 0) against their correctness, over ``bins`` equal-width bins, and the
    table: each bin's range, count, mean confidence and accuracy."""
    covered = _covered(records)
    table, error = [], 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        inside = [
            r
            for r in covered
            if low <= (r["confidence"] or 0.0) < high or (b == bins - 1 and r["confidence"] == 1.0)
        ]
        if not inside:
            continue
        confidence = statistics.fmean(r["confidence"] or 0.0 for r in inside)
        accuracy = statistics.fmean(1.0 if _right(r) else 0.0 for r in inside)
        error += len(inside) / len(covered) * abs(confidence - accuracy)
        table.append(
            {
                "bin": f"{low:.1f}-{high:.1f}",
                "items": len(inside),
                "confidence": round(confidence, 3),
                "accuracy": round(accuracy, 3),
            }
        )
    return round(error, 4), table


def verdict_metrics(records: Sequence[Record]) -> dict[str, Any]:
    """Every figure of the bench's JSON line that one run's records give."""
    covered = _covered(records)
    by_gold = {g: [r for r in covered if r["gold"] == g] for g in ("true", "false")}
    wrong_sure = [r for r in covered if not _right(r) and (r["confidence"] or 0.0) >= CONFIDENT]
    gold = [r["gold"] for r in records]
    said = [r["verdict"] if r["verdict"] in ANSWERS else None for r in records]
    times = sorted(r["check_s"] for r in records)
    ece, _ = reliability(records)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))] if times else 0.0
    return {
        "items": len(records),
        "coverage": _share(len(covered), len(records)),
        "covered_accuracy": _share(sum(map(_right, covered)), len(covered)),
        "covered_accuracy_true": _share(sum(map(_right, by_gold["true"])), len(by_gold["true"])),
        "covered_accuracy_false": _share(sum(map(_right, by_gold["false"])), len(by_gold["false"])),
        "confidently_wrong": _share(len(wrong_sure), len(records)),
        "macro_f1": round(macro_f1(gold, said, ("true", "false")), 4),
        "ece": ece,
        "mean_check_s": round(statistics.fmean(times), 2) if times else 0.0,
        "p95_check_s": round(p95, 2),
    }


def agreement(runs: dict[str, list[str]]) -> float:
    """The share of items whose repeated runs all gave the same verdict."""
    if not runs:
        return 0.0
    same = sum(1 for verdicts in runs.values() if len(set(verdicts)) == 1)
    return round(same / len(runs), 4)


def calibration_table(records: Sequence[Record], edges: Sequence[float]) -> dict[str, Any]:
    """The reading calibration table: for each reading label ("refutes", "supports"),
    the share of right readings among the covered records read part by part whose
    ``restated`` probability falls in each bin (``edges``: inclusive upper bounds after
    the first, e.g. ``[0.0, 0.7, 0.9, 1.0]``), with Laplace smoothing so that an empty or
    tiny bin is not called certain; a label read as a whole by the stance reader has one
    bin, ``stance:<label>``."""
    bins: dict[str, list[list[float]]] = {}
    parts = [r for r in records if r.get("read_by") == "parts" and r.get("restated") is not None]
    whole = [r for r in records if r.get("read_by") == "stance"]
    for label, verdict in (("refutes", "false"), ("supports", "true")):
        mine = [r for r in parts if r.get("core_label") == label]
        bins[label] = [_row(mine, verdict, low, high) for low, high in itertools.pairwise(edges)]
        as_whole = [dict(r, restated=1.0) for r in whole if r.get("core_label") == label]
        bins[f"stance:{label}"] = [_row(as_whole, verdict, 0.0, 1.0)]
    return {"claims": len(records), "bins": bins}


def _row(records: Sequence[Record], verdict: str, low: float, high: float) -> list[float]:
    """One bin: its bounds, the Laplace-smoothed share of right readings, its count."""
    inside = [r for r in records if low <= r["restated"] <= high]
    right = sum(1 for r in inside if r["gold"] == verdict)
    return [low, high, round((right + 1) / (len(inside) + 2), 3), len(inside)]
