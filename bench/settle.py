"""Verdicts on claims the offline encyclopedia settles: does the verdict follow the
evidence, how sure is it, how long does it take?

``bench/data/common_claims.jsonl`` holds the project's own 240 labelled claims (half
true, half false with exactly one fact changed, written as chats forward them; see
``bench/data/README.md``), each settled by the first three sentences of an article of
the offline Wikipedia summaries (``bench/lib/claims_check.py`` checks it). Each is
checked on the configured models (the embedded defaults unless ``--config`` says
otherwise), as ``zofia check --recheck`` checks a post, and scored:

* ``coverage``: the share answered true, false or misleading (unproven abstains);
* ``covered_accuracy`` (and ``_true``, ``_false``: on true and on false claims);
* ``confidently_wrong``: the share of all items answered wrongly at confidence ≥ 0.7;
* ``macro_f1`` over true/false with abstentions counted wrong, and ``ece``, the expected
  calibration error of the covered answers' confidence (10 bins; the reliability table
  goes to stderr and the records file);
* ``mean_check_s``, ``p95_check_s``: the check's own time (``report.timings.total_ms``);
* ``only_llm_accuracy``, ``only_llm_macro_f1``: one call on the claim alone, the same
  items (``--no-baseline`` skips it: ``null``);
* ``pass3``: the share of a fixed sample (``--pass3 N``, default 30; 0 skips it:
  ``null``) whose three runs give the same verdict.

``--reading-only`` runs Stage 1 and the claim reading alone (no panel, no debate) and
reads the verdict off the core claim: supported → true, refuted → false, else unproven,
with the reading's calibrated confidence: the fast inner loop. ``--calibrate`` fits the
reading calibration table on half of the records (by the claim's hash) and writes
``zofia_engine/data/reading_calibration.json``, then reports the other half's
calibration error. ``--smoke`` runs 2 items reading-only on a scripted model (CI).

    python bench/settle.py [--limit N] [--seed S] [--data PATH] [--reading-only]
        [--config FILE] [--pass3 N] [--no-baseline] [--calibrate] [--smoke]

Records go to ``bench/eval/settle-<mode>.jsonl`` (one line per item; a second run with
the same arguments resumes). The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.settle_metrics import agreement, calibration_table, reliability, verdict_metrics

from zofia_engine.agents.confidence import CALIBRATION_FILE, Calibration
from zofia_engine.check_run import CheckRun
from zofia_engine.config import EngineSettings, load_config
from zofia_engine.engine import Engine
from zofia_engine.evaluation.baseline import OnlyLLMBaseline
from zofia_engine.evaluation.scores import macro_f1
from zofia_engine.llm.router import LLMRouter
from zofia_engine.post import Ablation, Post
from zofia_engine.report import ClaimResult, Report

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "common_claims.jsonl"
EVAL = ROOT / "bench" / "eval"
#: no panel, no debate: Stage 1 and the claims read against the evidence
READING = Ablation(linguist=False, expert=False, debate=False)
EDGES = [0.0, 0.5, 0.7, 0.85, 1.0]


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
    # Round-robin over the groups (kinds, each label in turn), so that every kind and
    # both labels get their share.
    keys = sorted(groups, key=lambda key: (key[1], key[0]))
    queues = [[groups[key][int(j)] for j in rng.permutation(len(groups[key]))] for key in keys]
    chosen: list[int] = []
    while len(chosen) < limit:
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    return [items[i] for i in sorted(chosen)]


def _core(claims: list[ClaimResult]) -> ClaimResult | None:
    return next((c for c in claims if c.kind == "core"), None)


def record_of(item: dict[str, Any], report: Report, seconds: float) -> dict[str, Any]:
    core = _core(report.claims)
    return {
        "claim": item["claim"],
        "gold": item["label"],
        "kind": item.get("kind", ""),
        "pair": item.get("pair"),
        "verdict": report.verdict,
        "confidence": report.confidence.value,
        "confidence_source": report.confidence.source,
        "check_s": round(seconds, 2),
        "calls": len(report.usage.log),
        "core_label": core.label if core else None,
        "read_by": core.read_by if core else "",
        "restated": core.restated if core else None,
        "parts": [p.model_dump() for p in core.parts] if core else [],
        "quote": core.quotes[0].text if core and core.quotes else "",
    }


async def read_only(engine: Engine, settings: EngineSettings, claim: str) -> Report:
    """Stage 1 and the claim reading; the verdict read off the core claim."""
    from zofia_engine.agents.confidence import reading_confidence

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
    reading: bool,
) -> list[dict[str, Any]]:
    """Each item checked once, resuming from ``out``."""
    done = {}
    if out.exists():
        for line in out.read_text().splitlines():
            record = json.loads(line)
            done[record["claim"]] = record
    records = []
    for item in items:
        if item["claim"] not in done:
            report, seconds = await check_one(engine, settings, item["claim"], reading)
            done[item["claim"]] = record_of(item, report, seconds)
            with out.open("a") as f:
                f.write(json.dumps(done[item["claim"]], ensure_ascii=False) + "\n")
            print(
                f"{done[item['claim']]['verdict']:10} {item['label']:5} {seconds:6.1f}s "
                f"{item['claim'][:70]}",
                file=sys.stderr,
                flush=True,
            )
        records.append(done[item["claim"]])
    return records


async def repeated(
    engine: Engine, settings: EngineSettings, items: list[dict[str, Any]], reading: bool
) -> float:
    """``pass3``: each item three times; the share whose verdicts all agree."""
    runs: dict[str, list[str]] = {}
    for item in items:
        for _ in range(3):
            report, _ = await check_one(engine, settings, item["claim"], reading)
            runs.setdefault(item["claim"], []).append(report.verdict)
    return agreement(runs)


async def only_llm(
    settings: EngineSettings, items: list[dict[str, Any]], llm: Any
) -> dict[str, float]:
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


def calibrate(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Fit the reading table on half of the records (the fit half: an even first byte of
    the claim's SHA-256; a pair's true and false claims may fall apart), write it, and
    score the other half's reading-only verdicts with it."""
    fit = [r for r in records if _half(r["claim"]) == 0]
    dev = [r for r in records if _half(r["claim"]) == 1]
    table = calibration_table(fit, EDGES)
    table["fitted"] = f"bench/settle.py --calibrate, {len(fit)} records (the fit half)"
    path = ROOT / "zofia_engine" / CALIBRATION_FILE
    path.write_text(json.dumps(table, indent=1) + "\n")
    fitted = Calibration({k: [tuple(r) for r in v] for k, v in table["bins"].items()}, len(fit))
    for r in dev:
        if r["core_label"] in ("supports", "refutes") and r.get("read_by") == "parts":
            r["confidence"] = fitted.lookup(r["core_label"], r.get("restated") or 0.0)
        elif r["core_label"] in ("supports", "refutes") and r.get("read_by") == "stance":
            r["confidence"] = fitted.lookup(f"stance:{r['core_label']}", 1.0)
    ece, rows = reliability(dev)
    return {
        "calibration_fit": len(fit),
        "calibration_dev": len(dev),
        "dev_ece": ece,
        "dev_table": rows,
    }


def _half(claim: str) -> int:
    return hashlib.sha256(claim.encode()).digest()[0] % 2


def _settings(args: argparse.Namespace) -> EngineSettings:
    if args.smoke:
        return EngineSettings.model_validate(
            {"llm": {"backend": "openai", "openai": {"api_key": "sk-smoke", "model": "panel"}}}
        )
    return load_config(args.config) if args.config else EngineSettings()


def _router(args: argparse.Namespace, settings: EngineSettings) -> LLMRouter | None:
    if not args.smoke:
        return None
    from tests.peers.fakes.panel_script import PanelScript, ScriptedPanel

    from zofia_engine.llm.scripted import scripted

    return LLMRouter(settings.llm, backends=scripted(ScriptedPanel(PanelScript())))


async def main(args: argparse.Namespace) -> dict[str, Any]:
    settings = _settings(args)
    reading = args.reading_only or args.smoke
    limit = 2 if args.smoke else args.limit
    items = load_items(args.data, limit, args.seed)
    mode = "smoke" if args.smoke else ("reading" if reading else "check")
    out = args.work / f"settle-{mode}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    router = _router(args, settings)
    result: dict[str, Any] = {"mode": mode}
    async with Engine(settings, llm=router) as engine:
        await engine.load()
        records = await run_items(engine, settings, items, out, reading)
        sample = load_items(args.data, args.pass3, args.seed + 1) if args.pass3 else []
        pass3 = await repeated(engine, settings, sample, reading) if sample else None
    result.update(verdict_metrics(records))
    _, table = reliability(records)
    print(json.dumps({"reliability": table}), file=sys.stderr)
    if args.calibrate:
        result.update(calibrate(records))
    if args.no_baseline:
        result.update({"only_llm_accuracy": None, "only_llm_macro_f1": None})
    else:
        result.update(await only_llm(settings, items, _router(args, settings)))
    result["pass3"] = pass3
    result["pass3_items"] = len(sample)
    return result


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reading-only", action="store_true")
    parser.add_argument("--config", type=Path, default=None)
    parser.add_argument("--pass3", type=int, default=30)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--work", type=Path, default=EVAL)
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse()
    if arguments.smoke:
        arguments.pass3, arguments.work = 1, Path(__import__("tempfile").mkdtemp())
    print(json.dumps(asyncio.run(main(arguments))))
