"""Score an unfinished ``bench/quality_corpus.py`` run on the items both the pipeline and
the only-LLM baseline finished, scored by ``zofia eval``'s own summary
(``zofia_engine.evaluation.runner.summarise``) with liar-3 and liar-binary labels:
abstentions counted wrong, confidently wrong at a confidence of 0.7 or more.

    python bench/quality_partial.py [PIPELINE.jsonl] [ONLY_LLM.jsonl] [--smoke]

Defaults: the records kept in bench/eval/. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lib.smoke import smoke_args

from zofia_engine.evaluation.dataset import LABEL_MAPPINGS
from zofia_engine.evaluation.metrics import Metrics
from zofia_engine.evaluation.runner import ItemRecord, summarise

EVAL = Path(__file__).parent / "eval"
ONE_ROUND_CALLS = 8  # at most this many calls: the check stopped after one round


def records(path: str) -> dict[str, ItemRecord]:
    with open(path, encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    keys = {r["run_key"] for r in rows if r.get("type") == "run"}
    assert len(keys) == 1, f"{path} mixes runs: {keys}"
    return {str(r["id"]): ItemRecord.model_validate(r) for r in rows if r.get("type") == "item"}


def scored(rows: list[ItemRecord], labels: str) -> Metrics:
    """``zofia eval``'s summary of ``rows`` (:func:`summarise`: abstentions counted wrong,
    confidently wrong at :data:`~zofia_engine.evaluation.abstention.CONFIDENT`), their
    gold and predicted classes read again with the ``labels`` mapping."""
    m = LABEL_MAPPINGS[labels]
    mapped = [
        r.model_copy(
            update={"gold": m.gold[r.raw_label.lower()], "predicted": m.predicted(r.verdict or "")}
        )
        for r in rows
    ]
    return summarise(mapped, m.classes, resamples=0)


def mean_wall(rows: list[ItemRecord]) -> float | None:
    return round(scored(rows, "liar-3").mean_wall_s, 1) if rows else None


def confusion(rows: list[ItemRecord]) -> dict[str, int]:
    """How many items of each liar-3 gold class got each answer ("abstain": unproven)."""
    m = LABEL_MAPPINGS["liar-3"]
    counts: dict[str, int] = {}
    for r in rows:
        said = m.predicted(r.verdict or "") or "abstain"
        key = f"{m.gold[r.raw_label.lower()]}->{said}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    kept = [EVAL / "liar_plus_val-adaptive.jsonl", EVAL / "liar_plus_val-only-llm.jsonl"]
    parser.add_argument("pipeline", nargs="?", default=str(kept[0]), metavar="PIPELINE.jsonl")
    parser.add_argument("only_llm", nargs="?", default=str(kept[1]), metavar="ONLY_LLM.jsonl")
    args = smoke_args(parser, {})  # no smaller run: it reads the kept records
    paths = [args.pipeline, args.only_llm]
    full, only = records(paths[0]), records(paths[1])
    ids = [i for i in full if i in only]
    f, o = [full[i] for i in ids], [only[i] for i in ids]
    f3, o3 = scored(f, "liar-3"), scored(o, "liar-3")
    f2, o2 = scored(f, "liar-binary"), scored(o, "liar-binary")
    assert f3.selective is not None and o3.selective is not None  # summarise sets it
    covered = f3.selective.covered_accuracy
    one_round = [r for r in f if r.llm_calls <= ONE_ROUND_CALLS]
    settled = [r for r in f if r.llm_calls > ONE_ROUND_CALLS]
    result = {
        "items": len(ids),
        "full_items_done": len(full),
        "only_llm_items_done": len(only),
        "full_macro_f1": round(f3.macro_f1, 3),
        "only_llm_macro_f1": round(o3.macro_f1, 3),
        "gain_macro_f1_points": round(100 * (f3.macro_f1 - o3.macro_f1), 1),
        "full_macro_f1_binary": round(f2.macro_f1, 3),
        "only_llm_macro_f1_binary": round(o2.macro_f1, 3),
        "full_coverage": round(f3.selective.coverage, 3),
        "full_covered_accuracy": round(covered, 3) if covered is not None else None,
        "full_confidently_wrong": round(f3.selective.confidently_wrong, 3),
        "only_llm_confidently_wrong": round(o3.selective.confidently_wrong, 3),
        "full_mean_wall_s": mean_wall(f),
        "settled_path_items": len(settled),
        "settled_path_mean_wall_s": mean_wall(settled),
        "one_round_items": len(one_round),
        "one_round_mean_wall_s": mean_wall(one_round),
        "full_confusion": confusion(f),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
