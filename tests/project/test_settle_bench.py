"""``bench/settle.py`` ends with one JSON line holding every figure the verdict issue
asks for. The smoke run proves the plumbing on a scripted model (two items, the reading
alone, the baseline, one repeated item); the figures are measured by the bench on the
packaged model, not asserted here."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "lib"))

from resumed import run_resumed  # noqa: E402
from settle_metrics import agreement, calibration_table, verdict_metrics  # noqa: E402

KEYS = {
    "items",
    "coverage",
    "covered_accuracy",
    "covered_accuracy_true",
    "covered_accuracy_false",
    "confidently_wrong",
    "macro_f1",
    "ece",
    "mean_check_s",
    "p95_check_s",
    "mean_verdict_s",
    "p95_verdict_s",
    "verdict_share",
    "only_llm_accuracy",
    "only_llm_macro_f1",
    "pass3",
}


@pytest.mark.slow
def test_the_settle_bench_prints_every_target_key() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "settle.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(result) >= KEYS, KEYS - set(result)
    assert result["items"] == 2 and result["mode"] == "smoke"
    assert 0.0 <= result["coverage"] <= 1.0 and result["pass3"] is not None


def test_the_metrics_count_abstentions_and_confident_errors() -> None:
    records: list[dict[str, object]] = [
        {"gold": "true", "verdict": "true", "confidence": 0.9, "check_s": 10.0},
        {"gold": "false", "verdict": "true", "confidence": 0.8, "check_s": 20.0},
        {"gold": "false", "verdict": "unproven", "confidence": None, "check_s": 30.0},
        {"gold": "false", "verdict": "false", "confidence": 0.6, "check_s": 40.0},
    ]
    records[0]["verdict_s"] = 2.0  # shown early; the others only when the check ended
    m = verdict_metrics(records)
    assert (m["coverage"], m["covered_accuracy"]) == (0.75, round(2 / 3, 4))
    assert (m["covered_accuracy_true"], m["covered_accuracy_false"]) == (1.0, 0.5)
    assert m["confidently_wrong"] == 0.25  # the wrong "true" at 0.8
    assert m["mean_check_s"] == 25.0
    assert m["mean_verdict_s"] == 23.0 and m["p95_verdict_s"] == 40.0
    assert agreement({"a": ["true"] * 3, "b": ["true", "false", "true"]}) == 0.5


def test_the_calibration_table_bins_part_readings_and_gives_whole_readings_one_bin() -> None:
    parts = {"read_by": "parts", "core_label": "refutes"}
    records = [
        dict(parts, restated=0.2, gold="false"),
        dict(parts, restated=0.3, gold="true"),
        dict(parts, restated=0.95, gold="false"),
        {"read_by": "stance", "core_label": "supports", "restated": None, "gold": "true"},
        {"read_by": "stance", "core_label": "supports", "restated": None, "gold": "false"},
    ]
    table = calibration_table(records, [0.0, 0.5, 1.0])
    # Laplace-smoothed: (right + 1) / (n + 2)
    assert table["bins"]["refutes"] == [[0.0, 0.5, 0.5, 2], [0.5, 1.0, round(2 / 3, 3), 1]]
    assert table["bins"]["stance:supports"] == [[0.0, 1.0, 0.5, 2]]
    assert table["bins"]["stance:refutes"] == [[0.0, 1.0, 0.5, 0]]


def test_a_second_run_resumes_from_the_records_and_checks_nothing_twice(tmp_path: Path) -> None:
    checked: list[str] = []

    async def check(item: dict[str, object]) -> dict[str, object]:
        checked.append(str(item["id"]))
        return {"id": item["id"], "verdict": "true"}

    out = tmp_path / "records.jsonl"
    items: list[dict[str, object]] = [{"id": "a"}, {"id": "b"}, {"id": "c"}]
    first = asyncio.run(run_resumed(items[:2], out, "id", check))
    assert [r["id"] for r in first] == ["a", "b"] and checked == ["a", "b"]
    again = asyncio.run(run_resumed(items, out, "id", check, done_only=True))
    assert [r["id"] for r in again] == ["a", "b"] and checked == ["a", "b"]
    whole = asyncio.run(run_resumed(items, out, "id", check))
    assert [r["id"] for r in whole] == ["a", "b", "c"] and checked == ["a", "b", "c"]
    assert len(out.read_text("utf-8").splitlines()) == 3
