"""Verdicts on claims the offline encyclopedia settles: does the verdict follow the
evidence, how sure is it, how long does it take?

Three sets of labelled claims, each settled by the first three sentences of an article
of the offline Wikipedia summaries:

* ``--split dev`` (the default) and ``--split test``: the generated claim bank
  (``bench/claims/``, ``docs/verdicts.md`` says how it is made), split by article. Tune
  on ``dev`` and read it; ``test`` is sealed: run it once per change, never read item by
  item (its records go to ``~/.cache/zofia/claims/records/``, outside the repository,
  and no claim of it is printed), and report its figures beside the dev-test gap;
* ``--split own``: the project's own 240 hand-written claims
  (``bench/data/common_claims.jsonl``, or ``--data PATH``).

A sample of ``--limit N`` is stratified by label, kind and shape. Each claim is checked
on the configured models (the embedded defaults unless ``--config`` says otherwise),
as ``zofia check --recheck`` checks a post, and scored:

* ``coverage`` (and ``_true``, ``_false``): the share answered true, false or
  misleading (unproven abstains);
* ``covered_accuracy`` (and ``_true``, ``_false``: on true and on false claims);
* ``confidently_wrong`` (and ``_true``, ``_false``): the share answered wrongly at
  confidence ≥ 0.7;
* ``macro_f1`` over true/false with abstentions counted wrong, and ``ece``, the expected
  calibration error of the covered answers' confidence (10 bins; the reliability table
  goes to stderr and the summary file);
* ``classes``: why each claim ended as it did (``bench/lib/settle_metrics.py``,
  ``outcome_class``), and ``by_part``, ``by_shape``: coverage and accuracy per kind of
  value and per shape;
* ``mean_check_s``, ``p95_check_s``: the check's own time (``report.timings.total_ms``;
  ``null`` with ``--cache``), and ``mean_verdict_s``, ``p95_verdict_s``: the time to the
  verdict shown (``verdict_ms``, when the early card went out before the debate; else the
  whole check's), with ``verdict_share`` = ``mean_verdict_s / mean_check_s``;
* ``only_llm_accuracy``, ``only_llm_macro_f1``: one call on the claim alone, the same
  items (``--no-baseline`` skips it: ``null``);
* ``pass3``: the share of a fixed sample (``--pass3 N``; 0 skips it: ``null``) whose
  three runs give the same verdict, and ``pass3_flips``: how many went true ↔ false
  (``--pass3-only`` runs that sample alone, without ``--cache`` so that each run asks
  the model again, and writes ``settle-<split>-<mode>-pass3.json``);
* with ``--split test``: ``gap``, each figure on test minus the same on dev (the last
  dev run of the same mode, ``bench/eval/settle-dev-<mode>.json``).

``--reading-only`` runs Stage 1 and the claim reading alone (no panel, no debate) and
reads the verdict off the core claim: supported → true, refuted → false, else unproven,
with the reading's calibrated confidence: the fast inner loop. ``--cache`` keeps every
model reply on disk (``~/.cache/zofia/claims/llm``) so that a change to the rules after
the model runs again in seconds. ``--calibrate`` fits the reading calibration table on
the records (dev only) and writes ``zofia_engine/data/reading_calibration.json``.
``--smoke`` runs 2 items reading-only on a scripted model (CI).

    python bench/settle.py [--split dev|test|own] [--limit N] [--seed S] [--reading-only]
        [--cache] [--fresh] [--again RECORDS] [--config FILE] [--pass3 N] [--pass3-only]
        [--no-baseline] [--calibrate] [--smoke] [--data PATH] [--work DIR] [--done-only]

Records go to ``bench/eval/settle-<split>-<mode>.jsonl`` (one line per item; a second
run with the same arguments resumes; ``--fresh`` starts again; ``--again RECORDS``
checks the claims of a records file again, with the code as it is now; ``--done-only``
reports on the sample's claims already in the records and checks none, for a long run
stopped part-way: its JSON line's ``items`` says how many) and the figures
to ``bench/eval/settle-<split>-<mode>.json``. The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from claims.bank import bank, sample
from lib.resumed import append_record, read_records, run_resumed
from lib.settle_metrics import (
    agreement,
    by_group,
    error_classes,
    gaps,
    per_label,
    reliability,
    verdict_metrics,
)
from lib.settle_runs import calibrate, only_llm, record_of

from zofia_engine.agents.confidence import reading_confidence
from zofia_engine.check_run import CheckRun
from zofia_engine.config import EngineSettings, load_config
from zofia_engine.engine import Engine
from zofia_engine.llm.router import LLMRouter
from zofia_engine.post import Ablation, Post
from zofia_engine.report import ClaimResult, Report

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "common_claims.jsonl"
EVAL = ROOT / "bench" / "eval"
SEALED = Path.home() / ".cache" / "zofia" / "claims"
#: no panel, no debate: Stage 1 and the claims read against the evidence
READING = Ablation(linguist=False, expert=False, debate=False)


def load_items(path: Path, limit: int | None, seed: int) -> list[dict[str, Any]]:
    """The items of ``path`` (``claim`` or ``text``, ``label``), a fixed sample of
    ``limit`` stratified by label and kind when asked, in file order."""
    items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for item in items:
        item["claim"] = item.get("claim") or item["text"]
    if limit is None or limit >= len(items):
        return items
    rng = np.random.default_rng(seed)
    groups: dict[tuple[str, str], list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault((item["label"], item.get("kind", "")), []).append(i)
    keys = sorted(groups, key=lambda key: (key[1], key[0]))
    queues = [[groups[key][int(j)] for j in rng.permutation(len(groups[key]))] for key in keys]
    chosen: list[int] = []
    while len(chosen) < limit:
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    return [items[i] for i in sorted(chosen)]


def items_of(args: argparse.Namespace, limit: int | None, seed: int) -> list[dict[str, Any]]:
    """The claims of the split the arguments name (``--again``: those of a records file,
    in its order: the same claims checked again by the code as it is now)."""
    if args.split == "own" or args.smoke:
        items = load_items(args.data, None if args.again else limit, seed)
    else:
        items = sample(bank(0), args.split, None if args.again else limit, seed)
    if args.again:
        by_claim = {i["claim"]: i for i in items}
        lines = args.again.read_text().splitlines()
        items = [by_claim[c] for line in lines if (c := json.loads(line)["claim"]) in by_claim]
    return items


def _core(claims: list[ClaimResult]) -> ClaimResult | None:
    return next((c for c in claims if c.kind == "core"), None)


async def read_only(engine: Engine, settings: EngineSettings, claim: str) -> Report:
    """Stage 1 and the claim reading; the verdict read off the core claim."""
    run = CheckRun(
        settings, engine.retrieval, engine.llm.session(), Post(text=claim), READING, None
    )
    gathered = await run.gather()
    core = _core(gathered.claims)
    label = core.label if core is not None and core.id in gathered.grounded else None
    verdict = {"supports": "true", "refutes": "false"}.get(label or "", "unproven")
    confidence = reading_confidence(core) if core is not None and label else None
    usage, timings = run.usage_and_timings()
    return Report(
        verdict=verdict,
        claims=gathered.claims,
        evidence=run.panel.evidence,
        usage=usage,
        timings=timings,
        **({"confidence": confidence} if confidence else {}),
    )


async def check_one(
    engine: Engine, settings: EngineSettings, claim: str, reading: bool
) -> tuple[Report, float]:
    started = time.perf_counter()
    if reading:
        report = await read_only(engine, settings, claim)
    else:
        report = await engine.check(Post(text=claim))
    seconds = report.timings.get("total_ms", (time.perf_counter() - started) * 1000) / 1000
    return report, seconds


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

    def line(record: dict[str, Any], item: dict[str, Any]) -> str:
        seconds = record["check_s"]
        return f"{record['verdict']:10} {item['label']:5} {seconds:6.1f}s {item['claim'][:70]}"

    shown = None if args.split == "test" else line
    return await run_resumed(items, out, "claim", check, done_only=args.done_only, line=shown)


async def repeated(
    engine: Engine, settings: EngineSettings, items: list[dict[str, Any]], out: Path, reading: bool
) -> tuple[float, int]:
    """``pass3``: each item three times; the share whose verdicts all agree, and how
    many of them went from true to false or back. Each run's verdict is appended to
    ``out`` (claim and verdict only), so a stopped run resumes."""
    runs: dict[str, list[str]] = {}
    for record in read_records(out):
        runs.setdefault(record["claim"], []).append(record["verdict"])
    for item in items:
        while len(runs.setdefault(item["claim"], [])) < 3:
            report, _ = await check_one(engine, settings, item["claim"], reading)
            runs[item["claim"]].append(report.verdict)
            append_record(out, {"claim": item["claim"], "verdict": report.verdict})
    runs = {item["claim"]: runs[item["claim"]] for item in items}
    flips = sum(1 for v in runs.values() if {"true", "false"} <= set(v))
    return agreement(runs), flips


def _settings(args: argparse.Namespace) -> EngineSettings:
    if args.smoke:
        return EngineSettings.model_validate(
            {"llm": {"backend": "openai", "openai": {"api_key": "sk-smoke", "model": "panel"}}}
        )
    return load_config(args.config)  # the file, if any, and ZOFIA__SECTION__KEY overrides


def model_router(
    args: argparse.Namespace, settings: EngineSettings, cache: Path = SEALED / "llm"
) -> LLMRouter | None:
    """The scripted panel (``--smoke``), the model's replies kept on disk in ``cache``
    (``--cache``), or ``None``: the configured models."""
    if args.smoke:
        from tests.peers.fakes.panel_script import PanelScript, ScriptedPanel

        from zofia_engine.llm.scripted import scripted

        return LLMRouter(settings.llm, backends=scripted(ScriptedPanel(PanelScript())))
    if args.cache:
        from lib.llm_cache import cached_router

        return cached_router(settings, cache)
    return None


def figures(records: list[dict[str, Any]], cached: bool) -> dict[str, Any]:
    """Every figure of the JSON line that the records give."""
    result = verdict_metrics(records)
    result.update(per_label(records))
    if cached:
        result.update({f"{k}_{w}_s": None for k in ("mean", "p95") for w in ("check", "verdict")})
    mean_check = result["mean_check_s"]
    result["verdict_share"] = (
        round(result["mean_verdict_s"] / mean_check, 3) if mean_check else None
    )
    result["classes"] = error_classes(records)
    result["by_part"] = by_group(records, "part")
    result["by_shape"] = by_group(records, "shape")
    return result


async def main(args: argparse.Namespace) -> dict[str, Any]:
    settings = _settings(args)
    reading = args.reading_only or args.smoke
    limit = 2 if args.smoke else args.limit
    items = items_of(args, limit, args.seed)
    mode = "smoke" if args.smoke else ("reading" if reading else "check")
    folder = SEALED / "records" if args.split == "test" else args.work
    out = folder / f"settle-{args.split}-{mode}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh and out.exists():
        out.unlink()
    router = model_router(args, settings)
    result: dict[str, Any] = {"mode": mode, "split": args.split, "cached": bool(args.cache)}
    async with Engine(settings, llm=router) as engine:
        await engine.load()
        records = [] if args.pass3_only else await run_items(engine, settings, items, out, args)
        sample3 = items_of(args, args.pass3, args.seed + 1) if args.pass3 else []
        out3 = out.with_name(f"{out.stem}-pass3.jsonl")
        pass3 = await repeated(engine, settings, sample3, out3, reading) if sample3 else None
    if args.pass3_only:
        return _pass3_summary(args, result, pass3, len(sample3))
    result.update(figures(records, bool(args.cache)))
    _, table = reliability(records)
    result["reliability"] = table
    if args.calibrate and args.split != "test":
        result.update(calibrate(records, ROOT))
    if args.no_baseline:
        result.update({"only_llm_accuracy": None, "only_llm_macro_f1": None})
    else:
        result.update(await only_llm(settings, items, model_router(args, settings)))
    result["pass3"], result["pass3_flips"] = pass3 if pass3 else (None, None)
    result["pass3_items"] = len(sample3)
    if args.split == "test":
        dev = EVAL / f"settle-dev-{mode}.json"
        result["gap"] = gaps(result, json.loads(dev.read_text())) if dev.exists() else None
    if not args.smoke:
        summary = (EVAL if args.split == "test" else args.work) / f"settle-{args.split}-{mode}.json"
        summary.write_text(json.dumps(result, indent=1) + "\n")
    return result


def _pass3_summary(
    args: argparse.Namespace, result: dict[str, Any], pass3: tuple[float, int] | None, n: int
) -> dict[str, Any]:
    """``--pass3-only``: the three-runs figures alone, in their own summary file."""
    result["pass3"], result["pass3_flips"] = pass3 if pass3 else (None, None)
    result["pass3_items"] = n
    folder = EVAL if args.split == "test" else args.work
    (folder / f"settle-{args.split}-{result['mode']}-pass3.json").write_text(
        json.dumps(result, indent=1) + "\n"
    )
    return result


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test", "own"), default="dev")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reading-only", action="store_true")
    parser.add_argument("--config", type=Path, default=None)
    parser.add_argument("--pass3", type=int, default=0)
    parser.add_argument("--pass3-only", action="store_true")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--cache", action="store_true")
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--again", type=Path, default=None)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--done-only", action="store_true")
    parser.add_argument("--work", type=Path, default=EVAL)
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse()
    if arguments.smoke:
        arguments.pass3, arguments.work = 1, Path(__import__("tempfile").mkdtemp())
    print(json.dumps(asyncio.run(main(arguments)), ensure_ascii=False))
