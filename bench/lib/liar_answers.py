"""What ``bench/liar_settle.py`` keeps of each checked LIAR-PLUS claim, why each ended as
it did, and the answer reading's calibration table it fits on the dev records."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lib.settle_metrics import ANSWERS, reliability
from lib.settle_runs import record_of as settle_record

from zofia_engine.agents.confidence import ANSWER_CALIBRATION_FILE, Calibration
from zofia_engine.report import Report

__all__ = ["EDGES", "calibrate", "liar_classes", "outcome_class", "record_of"]

#: the bins of the findings question's probability (of the settled side)
EDGES = [0.0, 0.7, 0.8, 0.9, 1.0]
Record = dict[str, Any]


def record_of(item: Record, report: Report, seconds: float) -> Record:
    """One checked claim as ``bench/settle.py`` keeps it, with its id, its six-way label,
    whether its own justification was among the evidence (``article_found``), and what
    the answer reading saw (``kind``; ``answer``: its readings, and ``answer_own``:
    whether the answer it read was the claim's own justification)."""
    record = settle_record(item, report, seconds)
    core = next((c for c in report.claims if c.kind == "core"), None)
    answer = core.answer if core is not None else None
    by_id = {e.id: e.url for e in report.evidence}
    texts = {e.id: e.text for e in report.evidence}
    own = f"corpus:{item['id']}"
    record.update(
        {
            "id": item["id"],
            "raw_label": item["raw_label"],
            "article_found": any(e.url == own for e in report.evidence),
            "kind": answer.kind if answer is not None else "",
            "answer": answer.model_dump() if answer is not None else None,
            "answer_own": answer is not None and by_id.get(answer.evidence_id) == own,
            "core_text": core.text if core is not None else "",
            "answer_text": texts.get(answer.evidence_id, "") if answer is not None else "",
        }
    )
    return record


def outcome_class(record: Record) -> str:
    """Why a record ended as it did: ``right``, ``true_called_false``,
    ``false_called_true``; or, abstaining, ``not_found`` (its own justification was not
    among the evidence), ``no_answer`` (no fact-check close enough to answer it),
    ``other_answer`` (the answer read was another claim's check), ``disagree`` (two
    readings leaned opposite ways), ``one_reading`` (one reading leaned, the others
    not), ``no_lean`` (none leaned), or ``not_read`` (no core claim)."""
    verdict, gold = record["verdict"], record["gold"]
    if verdict in ANSWERS:
        return "right" if verdict == gold else f"{gold}_called_{verdict}"
    if not record.get("article_found"):
        return "not_found"
    if record.get("core_label") is None:
        return "not_read"
    answer = record.get("answer")
    if answer is None:
        return "no_answer"
    if not record.get("answer_own"):
        return "other_answer"
    leans = {answer["stance"], answer["said_lean"], _figure_lean(answer)} - {None}
    if len(leans) > 1:
        return "disagree"
    return "one_reading" if leans else "no_lean"


def _figure_lean(answer: Record) -> str | None:
    return {"agrees": "supports", "differs": "refutes"}.get(answer.get("figures") or "")


def liar_classes(records: Sequence[Record]) -> dict[str, int]:
    """How many records fall in each :func:`outcome_class`, most first."""
    return dict(Counter(map(outcome_class, records)).most_common())


def _side(record: Record) -> float | None:
    """The findings question's probability of the side the claim settled on."""
    answer = record.get("answer") or {}
    said = answer.get("said")
    if said is None or record.get("core_label") not in ("supports", "refutes"):
        return None
    return float(said) if record["core_label"] == "supports" else 1.0 - float(said)


def calibrate(records: list[Record], root: Path) -> dict[str, Any]:
    """Fit the answer table on the dev records read against an answer: per label, the
    Laplace-smoothed share of right verdicts per bin of :func:`_side` (:data:`EDGES`);
    write it, and the records' calibration error with it."""
    bins: dict[str, list[tuple[float, float, float, int]]] = {}
    settled = [r for r in records if r.get("read_by") == "answer" and _side(r) is not None]
    for label, verdict in (("refutes", "false"), ("supports", "true")):
        mine = [r for r in settled if r["core_label"] == label]
        rows = []
        for low, high in itertools.pairwise(EDGES):
            inside = [r for r in mine if low <= (_side(r) or 0.0) <= high]
            right = sum(1 for r in inside if r["gold"] == verdict)
            rows.append((low, high, round((right + 1) / (len(inside) + 2), 3), len(inside)))
        bins[f"answer:{label}"] = rows
    table = {
        "claims": len(records),
        "bins": bins,
        "fitted": f"bench/liar_settle.py --calibrate, {len(records)} LIAR-PLUS dev records",
    }
    (root / "zofia_engine" / ANSWER_CALIBRATION_FILE).write_text(json.dumps(table, indent=1) + "\n")
    fitted = Calibration(bins, len(records))
    scored = []
    for r in records:
        if r["verdict"] in ANSWERS and r.get("read_by") == "answer":
            share = fitted.lookup(f"answer:{r['core_label']}", _side(r) or 0.0)
            r = dict(r, confidence=share)
        scored.append(r)
    ece, reliable = reliability(scored)
    return {"calibration_fit": len(settled), "calibrated_ece": ece, "calibrated_table": reliable}
