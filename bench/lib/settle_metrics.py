"""What ``bench/settle.py`` reports about verdicts: coverage, accuracy where it answered,
confidently wrong answers, macro-F1 with abstentions counted wrong, the calibration
error and its reliability table, the check times, and agreement over repeated runs; and
the reading calibration table it fits (``zofia_engine/data/reading_calibration.json``).

Pure functions over per-item records (``dict``: ``gold``, ``verdict``, ``confidence``,
``check_s``, ``verdict_s``; for the calibration, ``core_label`` and ``restated``).
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
    ece, _ = reliability(records)
    return {
        "items": len(records),
        "coverage": _share(len(covered), len(records)),
        "covered_accuracy": _share(sum(map(_right, covered)), len(covered)),
        "covered_accuracy_true": _share(sum(map(_right, by_gold["true"])), len(by_gold["true"])),
        "covered_accuracy_false": _share(sum(map(_right, by_gold["false"])), len(by_gold["false"])),
        "confidently_wrong": _share(len(wrong_sure), len(records)),
        "macro_f1": round(macro_f1(gold, said, ("true", "false")), 4),
        "ece": ece,
        **_seconds(records, "check_s"),
        **_seconds(records, "verdict_s"),
    }


def _seconds(records: Sequence[Record], field: str) -> dict[str, float]:
    """``mean_<what>_s`` and ``p95_<what>_s`` of ``field``; ``verdict_s``: the time to
    the verdict shown (the early card's, else the whole check's; older records have only
    ``check_s``)."""
    times = sorted(float(r.get(field) or r["check_s"]) for r in records)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))] if times else 0.0
    what = field.removesuffix("_s")
    mean = round(statistics.fmean(times), 2) if times else 0.0
    return {f"mean_{what}_s": mean, f"p95_{what}_s": round(p95, 2)}


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


def outcome_class(record: Record) -> str:
    """Why a record ended as it did, for the error classes of ``bench/settle.py``:
    ``right``; ``true_called_false`` or ``false_called_true`` (wrong); or, for an
    abstention, ``not_found`` (the settling article was not among the evidence),
    ``no_claim`` (no core claim), ``no_passage`` (no sentence about its subject),
    ``not_stated`` (every part left "not stated"), ``unreadable`` (a part given but not
    comparable as its kind), ``partly`` (some parts agree, another unanswered),
    ``said_low`` (the yes/no under its threshold), ``disagree`` (the two readings
    disagreed), ``stance`` (read as a whole, not settled) or ``other``."""
    verdict, gold = record["verdict"], record["gold"]
    if verdict in ANSWERS:
        return "right" if verdict == gold else f"{gold}_called_{verdict}"
    if record.get("article_found") is False:
        return "not_found"
    if record.get("core_label") is None:
        return "no_claim"
    if record.get("disagreed"):
        return "disagree"
    if record.get("read_by") == "stance":
        return "stance"
    parts = record.get("parts") or []
    outcomes = [p["outcome"] for p in parts]
    if not parts or not record.get("context"):
        return "no_passage"
    if all(not p["found"] for p in parts):
        return "not_stated"
    if any(p["found"] and p["outcome"] == "unstated" for p in parts):
        return "unreadable"
    if "agrees" in outcomes and any(not p["found"] for p in parts):
        return "partly"
    if record.get("restated") is not None:
        return "said_low"
    return "other"


def error_classes(records: Sequence[Record]) -> dict[str, int]:
    """How many records fall in each :func:`outcome_class`, most first."""
    counted: dict[str, int] = {}
    for r in records:
        key = outcome_class(r)
        counted[key] = counted.get(key, 0) + 1
    return dict(sorted(counted.items(), key=lambda kv: -kv[1]))


def by_group(records: Sequence[Record], field: str) -> dict[str, dict[str, Any]]:
    """Coverage and accuracy where it answered, per value of ``field`` (``part``,
    ``shape``, ``form`` …)."""
    groups: dict[str, list[Record]] = {}
    for r in records:
        groups.setdefault(str(r.get(field, "")), []).append(r)
    out = {}
    for key, mine in sorted(groups.items()):
        covered = _covered(mine)
        out[key] = {
            "items": len(mine),
            "coverage": _share(len(covered), len(mine)),
            "covered_accuracy": _share(sum(map(_right, covered)), len(covered)),
        }
    return out


#: The figures whose dev-test gap ``bench/settle.py --split test`` prints.
GAP_FIGURES = (
    "coverage",
    "coverage_true",
    "coverage_false",
    "covered_accuracy",
    "covered_accuracy_true",
    "covered_accuracy_false",
    "confidently_wrong",
    "confidently_wrong_true",
    "confidently_wrong_false",
    "macro_f1",
    "ece",
)


def per_label(records: Sequence[Record]) -> dict[str, float]:
    """Coverage and confidently wrong answers on true and on false claims apart."""
    out = {}
    for gold in ("true", "false"):
        mine = [r for r in records if r["gold"] == gold]
        covered = _covered(mine)
        sure = [r for r in covered if not _right(r) and (r["confidence"] or 0.0) >= CONFIDENT]
        out[f"coverage_{gold}"] = _share(len(covered), len(mine))
        out[f"confidently_wrong_{gold}"] = _share(len(sure), len(mine))
    return out


def gaps(test: dict[str, Any], dev: dict[str, Any]) -> dict[str, float | None]:
    """Each figure of :data:`GAP_FIGURES` on test minus the same on dev."""
    return {
        k: (round(test[k] - dev[k], 4) if isinstance(dev.get(k), (int, float)) else None)
        for k in GAP_FIGURES
        if isinstance(test.get(k), (int, float))
    }
