"""Where a check's time goes, before the verdict is shown and after: a profile of the
whole check on the claim bank's dev split, from the report's own timings and its log of
model calls.

Each claim of a fixed sample (``--limit N``, stratified as ``bench/settle.py`` samples)
is checked as ``zofia check --recheck`` checks a post, on the configured models (the
embedded defaults unless ``--config`` says otherwise), one after another. For each
check the report gives its steps' times (``timings``: Stage 1's retrieval, the triage,
the claims' extraction and reading, the debate; the triage runs beside Stage 1 and the
extraction, so the steps overlap), the moment the verdict was shown (``verdict_ms``,
when the evidence fixed it before the debate; else the whole check) and every model
call (``usage.log``: its step, its time reading the prompt and generating, the prompt
tokens evaluated and taken from llama.cpp's prompt cache, the tokens generated).

The JSON line holds the means per check:

* ``mean_check_s``, ``mean_verdict_s``, ``verdict_share``, ``early``: the share of
  checks whose verdict came before the debate;
* ``steps_s``: each step's time;
* ``before``, ``after``: the calls made before the verdict was shown and after it (the
  debaters' and the judge's), each with ``calls``, ``prompt_s`` (reading prompts),
  ``generate_s``, ``evaluated`` and ``cached`` prompt tokens, ``generated`` tokens;
* ``by_step``: the same per kind of call (``triage``, ``claims:extract``, ``parts``, …),
  sorted by time, which names the step that holds the verdict back.

    python bench/verdict_profile.py [--limit 8] [--seed S] [--config FILE] [--smoke]

``--smoke``: 2 claims on the scripted model (CI). The figures are kept in
``bench/eval/verdict_profile.json``; the last line of stdout is one JSON object.
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

from settle import DATA, EVAL, _settings, items_of, model_router

from zofia_engine.engine import Engine
from zofia_engine.post import Post
from zofia_engine.records.usage import LLMCall
from zofia_engine.report import Report

STEPS = ("retrieval", "triage", "claims", "debate")
#: the calls that come after an early verdict: the debate's turns and the judge's
AFTER = "debate"


def kind_of(call: LLMCall) -> str:
    """A call's kind: its step's first two parts (``claims:read:claim-1`` → ``claims:read``)."""
    return ":".join(call.step.split(":")[:2])


def call_figures(calls: list[LLMCall]) -> dict[str, float]:
    """The sums over ``calls``: their number, seconds reading and generating, tokens."""
    prompt_ms = sum(c.prompt_ms or 0.0 for c in calls)
    cached = sum(c.cached_tokens or 0 for c in calls)
    return {
        "calls": len(calls),
        "prompt_s": prompt_ms / 1000,
        "generate_s": sum(c.latency_ms for c in calls) / 1000 - prompt_ms / 1000,
        "evaluated": sum(c.prompt_tokens for c in calls) - cached,
        "cached": cached,
        "generated": sum(c.completion_tokens for c in calls),
    }


def profile_of(report: Report) -> dict[str, Any]:
    """One check's profile: its times, and its calls before and after the verdict."""
    timings, calls = report.timings, report.usage.log
    early = "verdict_ms" in timings
    after = [c for c in calls if early and c.step.startswith(AFTER)]
    before = [c for c in calls if c not in after]
    return {
        "check_s": timings["total_ms"] / 1000,
        "verdict_s": timings.get("verdict_ms", timings["total_ms"]) / 1000,
        "early": early,
        "steps_s": {s: timings.get(f"{s}_ms", 0.0) / 1000 for s in STEPS},
        "before": call_figures(before),
        "after": call_figures(after),
        "by_step": {
            k: call_figures([c for c in calls if kind_of(c) == k])
            for k in {kind_of(c) for c in calls}
        },
    }


def mean_of(values: list[Any]) -> Any:
    """The mean of numbers, or of dicts of them key by key (a key a dict lacks counts as
    zero: a check that made no call of a kind)."""
    if isinstance(values[0], dict):
        keys = sorted({k for v in values for k in v})
        return {k: mean_of([v.get(k, _zero(values, k)) for v in values]) for k in keys}
    return round(sum(float(v) for v in values) / len(values), 3)


def _zero(values: list[dict[str, Any]], key: str) -> Any:
    """Zero in the shape of ``key``'s value where a dict of ``values`` holds it."""
    present = next(v[key] for v in values if key in v)
    return {k: 0.0 for k in present} if isinstance(present, dict) else 0.0


def _model_s(figures: dict[str, float]) -> float:
    return figures["prompt_s"] + figures["generate_s"]


def summary(profiles: list[dict[str, Any]]) -> dict[str, Any]:
    """The means per check over ``profiles``."""
    result: dict[str, Any] = {"items": len(profiles)}
    for key in ("check_s", "verdict_s"):
        result[f"mean_{key}"] = mean_of([p[key] for p in profiles])
    result["verdict_share"] = round(result["mean_verdict_s"] / result["mean_check_s"], 3)
    result["early"] = mean_of([p["early"] for p in profiles])
    for key in ("steps_s", "before", "after"):
        result[key] = mean_of([p[key] for p in profiles])
    by_step = mean_of([p["by_step"] for p in profiles if p["by_step"]] or [{}])
    result["by_step"] = dict(sorted(by_step.items(), key=lambda kv: -_model_s(kv[1])))
    return result


async def main(args: argparse.Namespace) -> dict[str, Any]:
    settings = _settings(args)
    items = items_of(args, 2 if args.smoke else args.limit, args.seed)
    profiles = []
    async with Engine(settings, llm=model_router(args, settings)) as engine:
        await engine.load()
        for item in items:
            profiles.append(profile_of(await engine.check(Post(text=item["claim"]))))
    result = summary(profiles)
    if not args.smoke:
        (EVAL / "verdict_profile.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", type=Path, default=None)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    # what settle.py's helpers read: the dev split of the bank, no cache, no records
    args.split, args.again, args.cache, args.data = "dev", None, False, DATA
    return args


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(parse())), ensure_ascii=False))
