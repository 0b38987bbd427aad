"""Score an unfinished ``bench/quality_corpus.py`` run on the items both the pipeline and
the only-LLM baseline finished, with the bench's rules (liar-3 and liar-binary labels,
abstentions counted wrong, confidently wrong at a confidence of 0.7 or more).

    python bench/quality_partial.py [PIPELINE.jsonl] [ONLY_LLM.jsonl]

Defaults: the records kept in bench/eval/. The last line is one JSON object.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from zofia_engine.evaluation.dataset import LABEL_MAPPINGS
from zofia_engine.evaluation.scores import macro_f1

EVAL = Path(__file__).parent / "eval"
SURE = 0.7  # the bench's "confidently wrong" threshold
ONE_ROUND_CALLS = 8  # at most this many calls: the check stopped after one round


def records(path: str) -> dict[str, dict[str, Any]]:
    with open(path, encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    keys = {r["run_key"] for r in rows if r.get("type") == "run"}
    assert len(keys) == 1, f"{path} mixes runs: {keys}"
    return {str(r["id"]): r for r in rows if r.get("type") == "item"}


def f1(rows: list[dict[str, Any]], labels: str) -> float:
    m = LABEL_MAPPINGS[labels]
    gold = [m.gold[str(r["raw_label"]).lower()] for r in rows]
    return macro_f1(gold, [m.predicted(str(r["verdict"])) for r in rows], m.classes)


def wrong_and_sure(rows: list[dict[str, Any]]) -> float:
    sure = [r for r in rows if r["predicted"] not in (None, r["gold"])]
    return sum(1 for r in sure if (r["confidence"] or 0) >= SURE) / len(rows)


def mean_wall(rows: list[dict[str, Any]]) -> float | None:
    return round(statistics.mean(r["wall_s"] for r in rows), 1) if rows else None


def main() -> None:
    paths = sys.argv[1:] or [
        str(EVAL / "liar_plus_val-corpus-adaptive-partial.jsonl"),
        str(EVAL / "liar_plus_val-corpus-only-llm.jsonl"),
    ]
    full, only = records(paths[0]), records(paths[1])
    ids = [i for i in full if i in only]
    f, o = [full[i] for i in ids], [only[i] for i in ids]
    answered = [r for r in f if r["predicted"] is not None]
    right = sum(r["predicted"] == r["gold"] for r in answered)
    one_round = [r for r in f if r["llm_calls"] <= ONE_ROUND_CALLS]
    settled = [r for r in f if r["llm_calls"] > ONE_ROUND_CALLS]
    result = {
        "items": len(ids),
        "full_items_done": len(full),
        "only_llm_items_done": len(only),
        "full_macro_f1": round(f1(f, "liar-3"), 3),
        "only_llm_macro_f1": round(f1(o, "liar-3"), 3),
        "gain_macro_f1_points": round(100 * (f1(f, "liar-3") - f1(o, "liar-3")), 1),
        "full_macro_f1_binary": round(f1(f, "liar-binary"), 3),
        "only_llm_macro_f1_binary": round(f1(o, "liar-binary"), 3),
        "full_coverage": round(len(answered) / len(f), 3),
        "full_covered_accuracy": round(right / len(answered), 3) if answered else None,
        "full_confidently_wrong": round(wrong_and_sure(f), 3),
        "only_llm_confidently_wrong": round(wrong_and_sure(o), 3),
        "full_mean_wall_s": mean_wall(f),
        "settled_path_items": len(settled),
        "settled_path_mean_wall_s": mean_wall(settled),
        "one_round_items": len(one_round),
        "one_round_mean_wall_s": mean_wall(one_round),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
