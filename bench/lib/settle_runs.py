"""What ``bench/settle.py`` keeps of each checked claim, the reading calibration it fits
on them, and the only-LLM baseline it compares with."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from lib.settle_metrics import calibration_table, reliability

from zofia_engine.agents.confidence import CALIBRATION_FILE, Calibration
from zofia_engine.config import EngineSettings
from zofia_engine.evaluation.baseline import OnlyLLMBaseline
from zofia_engine.evaluation.scores import macro_f1
from zofia_engine.post import Post
from zofia_engine.report import Report
from zofia_engine.retrieval.wikipedia.titles import normalize_title

__all__ = ["EDGES", "calibrate", "only_llm", "record_of"]

EDGES = [0.0, 0.5, 0.7, 0.85, 1.0]
#: what a record keeps of the bank's item, for the error classes
_ITEM_FIELDS = ("kind", "part", "shape", "form", "changed", "article")


def record_of(item: dict[str, Any], report: Report, seconds: float) -> dict[str, Any]:
    """One checked claim: its item, the verdict, its confidence and time, and how its
    core claim was read."""
    core = next((c for c in report.claims if c.kind == "core"), None)
    titles = {normalize_title(e.title) for e in report.evidence if e.source == "wikipedia"}
    article = item.get("article")
    return {
        "claim": item["claim"],
        "gold": item["label"],
        **{f: item.get(f, "") for f in _ITEM_FIELDS},
        "pair": item.get("pair"),
        "verdict": report.verdict,
        "confidence": report.confidence.value,
        "confidence_source": report.confidence.source,
        "check_s": round(seconds, 2),
        # the verdict shown: the early card's when the evidence fixed it, else the whole
        "verdict_s": round(report.timings.get("verdict_ms", seconds * 1000) / 1000, 2),
        "calls": len(report.usage.log),
        "article_found": normalize_title(article) in titles if article else None,
        "core_label": core.label if core else None,
        "read_by": core.read_by if core else "",
        "restated": core.restated if core else None,
        "disagreed": bool(core and core.second is not None and not core.second.agrees),
        "parts": [p.model_dump() for p in core.parts] if core else [],
        "context": list(core.context) if core else [],
        "quote": core.quotes[0].text if core and core.quotes else "",
        "reason": core.reason if core else "",
    }


async def only_llm(
    settings: EngineSettings, items: list[dict[str, Any]], llm: Any
) -> dict[str, float]:
    """The packaged model asked "real or fake" with no evidence, on the same items."""
    said: list[str | None] = []
    async with OnlyLLMBaseline(settings, llm=llm) as baseline:
        await baseline.load()
        for item in items:
            report = await baseline.check(Post(text=item["claim"]))
            said.append(report.verdict if report.verdict in ("true", "false") else None)
    gold = [i["label"] for i in items]
    right = sum(1 for g, p in zip(gold, said, strict=True) if g == p)
    return {
        "only_llm_accuracy": round(right / len(items), 4) if items else 0.0,
        "only_llm_macro_f1": round(macro_f1(gold, said, ("true", "false")), 4),
    }


def calibrate(records: list[dict[str, Any]], root: Path) -> dict[str, Any]:
    """Fit the reading table on every record (dev's: the sealed test split is never fitted
    on) and write it; the confidence the test split then shows is its honest measure.
    Also fits it on half of the records (an even first byte of the claim's SHA-256) and
    scores the other half, for a held-out figure on dev itself."""
    table = calibration_table(records, EDGES)
    table["fitted"] = f"bench/settle.py --calibrate, {len(records)} dev records"
    (root / "zofia_engine" / CALIBRATION_FILE).write_text(json.dumps(table, indent=1) + "\n")
    fit = [r for r in records if _half(r["claim"]) == 0]
    held = [dict(r) for r in records if _half(r["claim"]) == 1]
    half = calibration_table(fit, EDGES)
    fitted = Calibration({k: [tuple(r) for r in v] for k, v in half["bins"].items()}, len(fit))
    for r in held:
        if r["core_label"] in ("supports", "refutes") and r.get("read_by") == "parts":
            r["confidence"] = fitted.lookup(r["core_label"], r.get("restated") or 0.0)
        elif r["core_label"] in ("supports", "refutes") and r.get("read_by") == "stance":
            r["confidence"] = fitted.lookup(f"stance:{r['core_label']}", 1.0)
    ece, rows = reliability(held)
    return {
        "calibration_fit": len(records),
        "calibration_held": len(held),
        "held_ece": ece,
        "held_table": rows,
    }


def _half(claim: str) -> int:
    return hashlib.sha256(claim.encode()).digest()[0] % 2
