"""Real claims with their evidence in hand: LIAR-PLUS val in the corpus setting, with
binary labels, on a dev split and a sealed test split (issue 44, item 6).

The justifications of ../shared/data/liar_plus_val.jsonl, every sentence that states the
rating removed, are the only source (``bench/quality_corpus.py`` builds the corpus and
its index, no Wikipedia, no web). The claims are split by id (``bench/lib/liar_split.py``):
tune on ``dev`` and read it item by item; ``test`` is sealed: run it once per change,
never read item by item (its records stay outside the repository and no claim of it is
printed), and report its figures beside the dev-test gap. The records of both splits
hold the dataset's claims, so both go to ``~/.cache/zofia/liar/records/``; only the
figures are kept in ``bench/eval/liar-<split>-<mode>.json``.

A sample of ``--limit N`` is stratified by the six-way label. Each claim is checked as
``bench/settle.py`` checks one (``--reading-only``: Stage 1, the claim reading and the
planned searches, the verdict read off the core claim; else the whole check) and
scored with the same figures: ``coverage``, ``covered_accuracy`` (and on true and false
claims apart), ``confidently_wrong`` (≥ 0.7; and apart), ``macro_f1`` (abstentions
wrong), ``ece``; ``found``: the share whose own justification was among the evidence;
``classes``: why each ended as it did; ``by_label`` (six-way), ``by_kind`` (what the
claim asserts, as the answer reading saw it) and ``by_read``: coverage and accuracy per
group; with ``--split test``, ``gap``: each figure on test minus the last dev run's.
``--cache`` keeps the model's replies on disk (``~/.cache/zofia/liar/llm``), so a rule
changed after the model ran is measured again in seconds. ``--calibrate`` (dev only)
fits the answer reading's calibration table on the records
(``zofia_engine/data/answer_calibration.json``).

    python bench/liar_settle.py [--split dev|test] [--limit N] [--seed S] [--reading-only]
        [--cache] [--fresh] [--calibrate] [--done-only] [--data PATH] [--work DIR]
        [--smoke]

``--done-only`` reports on the sample's claims already in the records and checks none
(a long run stopped part-way; ``items`` says how many). ``--smoke``: two made-up
claims, reading only, on a scripted model. The last line of
stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from liar_corpus import DEFAULT_DATA
from lib.liar_answers import calibrate, liar_classes, record_of
from lib.liar_split import liar_items, sample
from lib.resumed import run_resumed
from lib.settle_metrics import (
    by_group,
    gaps,
    per_label,
    reliability,
    verdict_metrics,
)
from lib.smoke import sample_file, smoke_args
from quality_corpus import build_corpus, write_config
from settle import check_one, model_router

from zofia_engine.config import EngineSettings, load_config
from zofia_engine.engine import Engine

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "bench" / "eval"
CACHE = Path.home() / ".cache" / "zofia" / "liar"
ANSWERS_ON = "[agents]\nanswered_at = 0.55\n"


async def run_items(
    engine: Engine,
    settings: EngineSettings,
    items: list[dict[str, Any]],
    out: Path,
    args: argparse.Namespace,
) -> list[dict[str, Any]]:
    """Each item checked once, resuming from ``out``; a line per item on stderr, except
    on the sealed split."""
    reading = args.reading_only or args.smoke

    async def check(item: dict[str, Any]) -> dict[str, Any]:
        report, seconds = await check_one(engine, settings, item["claim"], reading)
        return record_of(item, report, seconds)

    def line(r: dict[str, Any], item: dict[str, Any]) -> str:
        return (
            f"{r['verdict']:9} {item['raw_label']:11} {r['read_by']:6} "
            f"{r['check_s']:5.1f}s {item['id']:10} {item['claim'][:60]}"
        )

    shown = None if args.split == "test" else line
    return await run_resumed(items, out, "id", check, done_only=args.done_only, line=shown)


def figures(records: list[dict[str, Any]], cached: bool) -> dict[str, Any]:
    """Every figure of the JSON line that the records give."""
    result = verdict_metrics(records)
    result.update(per_label(records))
    if cached:
        result.update({"mean_check_s": None, "p95_check_s": None})
    n = len(records) or 1
    result["found"] = round(sum(1 for r in records if r["article_found"]) / n, 4)
    result["classes"] = liar_classes(records)
    result["by_label"] = by_group(records, "raw_label")
    result["by_kind"] = by_group(records, "kind")
    result["by_read"] = by_group(records, "read_by")
    return result


def _settings(args: argparse.Namespace) -> EngineSettings:
    args.work.mkdir(parents=True, exist_ok=True)
    database = build_corpus(args.data, args.work).resolve()
    config = write_config(args.work, database, "adaptive")
    # the answer reading, off by default, is what this bench measures
    config.write_text(config.read_text("utf-8").replace("[agents]\n", ANSWERS_ON), "utf-8")
    if args.smoke:
        base: dict[str, Any] = load_config(config, environ={}).model_dump()
        base["llm"] = {"backend": "openai", "openai": {"api_key": "sk-smoke", "model": "panel"}}
        return EngineSettings.model_validate(base)
    return load_config(config)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    settings = _settings(args)
    items = sample(liar_items(args.data, args.split), args.limit, args.seed)
    mode = "smoke" if args.smoke else ("reading" if args.reading_only else "check")
    out = args.records / f"liar-{args.split}-{mode}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh and out.exists():
        out.unlink()
    result: dict[str, Any] = {"mode": mode, "split": args.split, "cached": bool(args.cache)}
    async with Engine(settings, llm=model_router(args, settings, CACHE / "llm")) as engine:
        await engine.load()
        records = await run_items(engine, settings, items, out, args)
    result.update(figures(records, bool(args.cache)))
    _, result["reliability"] = reliability(records)
    if args.calibrate and args.split == "dev":
        result.update(calibrate(records, ROOT))
    if args.split == "test":
        dev = EVAL / f"liar-dev-{mode}.json"
        result["gap"] = gaps(result, json.loads(dev.read_text())) if dev.exists() else None
    if not args.smoke:
        (EVAL / f"liar-{args.split}-{mode}.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reading-only", action="store_true")
    parser.add_argument("--cache", action="store_true")
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--done-only", action="store_true")
    parser.add_argument(
        "--work", type=Path, default=CACHE / "corpus", help="the corpus, its index, the config"
    )
    parser.add_argument("--records", type=Path, default=CACHE / "records")
    smallest = {
        "limit": 2,
        "data": sample_file("liar_plus_val.jsonl"),
        "work": sample_file("liar-corpus"),
        "records": sample_file("liar-records"),
    }
    return smoke_args(parser, smallest, argv)


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(parse())), ensure_ascii=False))
