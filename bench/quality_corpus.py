"""Does evidence improve verdicts? LIAR-PLUS claims against an archive of their own
fact-checks, with the ratings taken out (RADAR's "retrieved evidence" setting, offline).

1. The justifications of ../shared/data/liar_plus_val.jsonl become a local corpus with
   every sentence that states the rating removed (``bench/liar_corpus.py``), indexed
   with SQLite FTS5 (``zofia corpus index``): 1,279 documents.
2. ``zofia eval`` runs a stratified sample (default 60, seed 0) with ``liar-3`` labels,
   the corpus as the only source (no Wikipedia, no web), on the embedded model: the
   full pipeline, then the only-LLM baseline on the same items.
3. Stage 1 alone runs each sampled claim again to see whether the claim's own
   justification was among the main query's first 10 results (recall@10).

4. The same records are scored again with ``liar-binary`` labels (half-true on the
   true side): a verdict does not depend on the label mapping, so nothing runs twice.

    python bench/quality_corpus.py [--limit 60] [--seed 0] [--work DIR] [--recall-only]
        [--data PATH] [--labels liar-3] [--depth adaptive|full] [--keep DIR] [--smoke]

``--smoke``: three made-up claims, the fake OpenAI server's scripted replies instead of
the embedded model, everything written to a temporary folder.

Any LIAR-style file works (``--data``: a JSONL of ``statement``/``label``/
``justification`` rows). Everything is written under ``--work`` (default
./quality-corpus): the corpus, its index, the config, both result files; a second run
resumes; the per-item records are copied to ``bench/eval/``. The last line is one JSON
object: macro-F1 (abstentions counted wrong) and misleading (half-true) F1 of both, the
pipeline's coverage, accuracy where it answered and confidently-wrong rate, recall@10,
the share of the recalled items it settled (``settled_given_recalled``), what searching
again added (``recall_at_10_planned``: the ruling retrieved by the first search's 10 or
a planned one; ``found_by_planned``; ``settled_planned``: the share of those settled;
``extra_calls_mean``, ``extra_s_mean``: the planned searches' cost per item), the same
macro-F1s with liar-binary labels (``*_binary``), and the mean wall time per item (with
``--recall-only``: step 3 alone, which needs no model).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from liar_corpus import DEFAULT_DATA, strip_ratings
from lib.smoke import fake_llm, sample_data, sample_file, smoke_args

from zofia_engine.config import EngineSettings, load_config
from zofia_engine.evaluation import load_items, sample_items
from zofia_engine.evaluation.dataset import LABEL_MAPPINGS
from zofia_engine.evaluation.scores import macro_f1
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.web.corpus import index_corpus

KEEP = Path(__file__).parent / "eval"


def build_corpus(data: Path, work: Path) -> Path:
    """The rating-free corpus and its index under ``work``; the index path."""
    database = work / "corpus.db"
    if database.exists():
        return database
    documents = work / "corpus.jsonl"
    with data.open(encoding="utf-8") as rows, documents.open("w", encoding="utf-8") as out:
        for line in rows:
            item = json.loads(line)
            kept, _ = strip_ratings(item.get("justification") or "")
            if kept:
                out.write(json.dumps({"id": str(item["id"]), "text": " ".join(kept)}) + "\n")
    index_corpus(documents, database)
    return database


def write_config(work: Path, database: Path, depth: str) -> Path:
    config = work / "zofia.toml"
    config.write_text(
        f"""# The corpus as the only source (bench/quality_corpus.py)
[agents]
depth = "{depth}"
[web]
backends = ["corpus"]
[web.corpus]
path = "{database}"
[wikipedia]
backend = "none"
""",
        encoding="utf-8",
    )
    return config


def run_eval(data: Path, config: Path, output: Path, args: argparse.Namespace, *extra: str) -> Any:
    zofia = Path(sys.executable).with_name("zofia")
    command = [
        str(zofia), "eval", str(data), "--labels", args.labels, "--limit", str(args.limit),
        "--seed", str(args.seed), "--config", str(config), "--output", str(output), "--json",
        *extra,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout)


async def recalled_at_10(data: Path, config: Path, args: argparse.Namespace) -> set[str]:
    """The ids of the sampled claims whose own justification is among the main query's
    first 10 corpus results."""
    items, _ = load_items(data, args.labels)
    sample = sample_items(items, args.limit, args.seed)
    settings: EngineSettings = load_config(config, environ={})
    found = set()
    async with EntityGuidedRetrieval(settings) as stage1:
        for item in sample:
            result = await stage1.run(item.text)
            main = [hit.url for hit in result.web if hit.query == "main"][:10]
            if f"corpus:{item.id}" in main:
                found.add(item.id)
    return found


def records(path: Path) -> list[dict[str, Any]]:
    """The item records of a result file (the last run's, one per item)."""
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    key = [r for r in rows if r.get("type") == "run"][-1]["run_key"]
    return [r for r in rows if r.get("type") == "item" and r.get("run_key") == key]


def planned_search(rows: list[dict[str, Any]], recalled: set[str]) -> dict[str, Any]:
    """What searching again added (issue 39): the share of the items whose own ruling is
    retrieved once the planned searches ran (recall@10 of the first search, or found by
    a planned one), the share of those settled, and the planned searches' mean model
    calls and seconds per item."""
    n = len(rows) or 1
    found = {
        str(r["id"]) for r in rows if f"corpus:{r['id']}" in r.get("planned_urls", [])
    } | recalled
    settled = {str(r["id"]) for r in rows if r["verdict"] in ("true", "false", "misleading")}
    return {
        "recall_at_10_planned": round(len(found) / n, 3),
        "found_by_planned": len(found - recalled),
        "settled_planned": round(len(found & settled) / len(found), 3) if found else None,
        "extra_calls_mean": round(sum(r.get("planned_calls", 0) for r in rows) / n, 2),
        "extra_s_mean": round(sum(r.get("planned_s", 0.0) for r in rows) / n, 2),
    }


def binary_macro_f1(rows: list[dict[str, Any]]) -> float:
    """Macro-F1 with liar-binary labels, abstentions counted wrong."""
    mapping = LABEL_MAPPINGS["liar-binary"]
    gold = [mapping.gold[str(r["raw_label"]).lower()] for r in rows]
    predicted = [mapping.predicted(str(r["verdict"])) for r in rows]
    return macro_f1(gold, predicted, mapping.classes)


def half_true_f1(metrics: dict[str, Any]) -> float | None:
    """The misleading (half-true) class's F1; ``None`` under labels without it
    (``liar-binary`` puts half-true on the true side)."""
    row = metrics["per_class"].get("half-true")
    return None if row is None else float(row["f1"])


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--labels", default="liar-3", help="the label mapping the runs use")
    parser.add_argument("--depth", choices=("adaptive", "full"), default="adaptive")
    parser.add_argument("--work", type=Path, default=Path("quality-corpus"))
    parser.add_argument(
        "--keep", type=Path, default=KEEP, help="where the per-item records are copied"
    )
    parser.add_argument(
        "--recall-only", action="store_true", help="Stage 1's recall@10 alone (no model calls)"
    )
    smallest = {
        "limit": 3,
        "data": sample_file("liar_plus_val.jsonl"),
        "work": sample_file("quality-corpus"),
        "keep": sample_data,
    }
    return smoke_args(parser, smallest)


def main() -> None:
    args = parse_args()
    with contextlib.ExitStack() as stack:
        if args.smoke:  # the zofia eval processes read it too
            os.environ.update(stack.enter_context(fake_llm()).env)
        evaluate(args)


def evaluate(args: argparse.Namespace) -> None:
    """Steps 1 to 4 (see the module's docstring); prints the last line."""
    args.work.mkdir(parents=True, exist_ok=True)
    database = build_corpus(args.data, args.work).resolve()
    config = write_config(args.work, database, args.depth)
    recalled = asyncio.run(recalled_at_10(args.data, config, args))
    recall = len(recalled) / args.limit if args.limit else 0.0
    print(f"recall@10 {recall:.3f}", flush=True)
    if args.recall_only:
        print(json.dumps({"items": args.limit, "recall_at_10": round(recall, 3)}))
        return
    name = args.data.stem
    full = run_eval(args.data, config, args.work / f"{args.depth}.jsonl", args)
    print(f"full pipeline: macro-F1 {full['macro_f1']:.3f}", flush=True)
    only = run_eval(args.data, config, args.work / "only-llm.jsonl", args, "--baseline", "only-llm")
    ran, baseline = (
        records(args.work / f"{args.depth}.jsonl"),
        records(args.work / "only-llm.jsonl"),
    )
    settled = {str(r["id"]) for r in ran if r["verdict"] in ("true", "false", "misleading")}
    for source, target in ((f"{args.depth}.jsonl", args.depth), ("only-llm.jsonl", "only-llm")):
        shutil.copyfile(args.work / source, args.keep / f"{name}-{target}.jsonl")
    sel = full["selective"]
    binary, only_binary = binary_macro_f1(ran), binary_macro_f1(baseline)
    print(
        json.dumps(
            {
                "items": full["items"],
                "depth": args.depth,
                "full_macro_f1": round(full["macro_f1"], 3),
                "full_misleading_f1": _rounded(half_true_f1(full)),
                "full_coverage": round(sel["coverage"], 3),
                "full_covered_accuracy": sel["covered_accuracy"],
                "full_covered_macro_f1": sel["covered_macro_f1"],
                "full_confidently_wrong": round(sel["confidently_wrong"], 3),
                "only_llm_macro_f1": round(only["macro_f1"], 3),
                "only_llm_misleading_f1": _rounded(half_true_f1(only)),
                "gain_macro_f1_points": round(100 * (full["macro_f1"] - only["macro_f1"]), 1),
                "full_macro_f1_binary": round(binary, 3),
                "only_llm_macro_f1_binary": round(only_binary, 3),
                "gain_macro_f1_points_binary": round(100 * (binary - only_binary), 1),
                "recall_at_10": round(recall, 3),
                "settled_given_recalled": round(len(recalled & settled) / len(recalled), 3)
                if recalled
                else None,
                **planned_search(ran, recalled),
                "full_mean_llm_calls": round(full["mean_llm_calls"], 1),
                "full_mean_wall_s": round(full["mean_wall_s"], 1),
            }
        )
    )


if __name__ == "__main__":
    main()
