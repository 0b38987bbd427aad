"""One real ``zofia check`` on the embedded defaults, timed from the inside and the
outside, at both depths: ``adaptive`` (the default: the evidence is read first, and the
full debate is held only when it settled something) and ``full`` (the papers' whole
run: the tree of claims, a stance call per web page, the debate to its stop).

Runs the installed ``zofia check --json --file`` (a fresh process each time: model
loads included) on a ~300-word article from ../shared/data/politifact_fnn.jsonl
(the first item with at least that many words, cut to 300), with no config file:
spaCy, MiniLM, offline Wikipedia, no web search, and the embedded
Qwen2.5-Coder-1.5B-Instruct Q4_K_M through llama.cpp.

For each depth: the check's own wall time (``report.timings.total_ms``), the whole
process's (model loads included), the LLM calls, the tokens generated and the prompt
tokens evaluated (not taken from a cache), how the models' time splits between reading
prompts and generating, the debate's rounds and why it stopped, and the peak resident
memory of the check process.

    python bench/embedded_check.py [--words 300] [--data PATH] [--only adaptive] [--smoke]

``--smoke``: 60 words of a made-up article, the adaptive depth only, the fake OpenAI
server's scripted replies instead of the embedded model, the report kept in a temporary
folder.

Each report is kept as ``bench/eval/embedded_check-<depth>.json`` (the full depth's
debate, which shows every turn, is what ``bench/repeat_threshold.py`` measures). The last
line is one JSON object: ``adaptive`` and ``full``, each with ``check_s``,
``verdict_s`` (the time to the verdict shown: the early card's when the evidence fixed
it before the debate, else the whole check's), ``process_s``, ``calls``,
``completion_tokens``, ``prompt_tokens_evaluated``, ``peak_rss_mb`` and ``verdict`` (and
more), and ``ratio`` = adaptive / full ``check_s``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lib.smoke import fake_llm, sample_data, sample_file, smoke_args

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "politifact_fnn.jsonl"
KEEP = Path(__file__).parent / "eval"
DEPTHS = {
    "adaptive": {"ZOFIA__AGENTS__DEPTH": "adaptive"},
    "full": {"ZOFIA__AGENTS__DEPTH": "full"},
}


def article(data: Path, words: int) -> tuple[str, str]:
    with data.open(encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            text = item.get("text") or ""
            if len(text.split()) >= words:
                return item["id"], " ".join(text.split()[:words])
    raise SystemExit(f"no item of {data} has {words} words")


def run_check(text: str, overrides: dict[str, str]) -> tuple[dict[str, Any], float, int]:
    """The report, the wall time and the peak RSS (bytes) of one ``zofia check``."""
    zofia = Path(sys.executable).with_name("zofia")
    with tempfile.TemporaryDirectory() as tmp:
        post, out, err = Path(tmp) / "post.txt", Path(tmp) / "out.json", Path(tmp) / "err.txt"
        post.write_text(text, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("ZOFIA")}
        env |= overrides | {"ZOFIA__STORAGE__PATH": str(Path(tmp) / "zofia.db")}
        started = time.perf_counter()
        with out.open("w") as stdout, err.open("w") as stderr:
            child = subprocess.Popen(
                [str(zofia), "check", "--json", "--file", str(post)],
                cwd=tmp,  # no ./zofia.toml: the embedded defaults
                env=env,
                stdout=stdout,
                stderr=stderr,
            )
            _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(err.read_text()[-2000:])
        report = json.loads(out.read_text())
    return report, wall, usage.ru_maxrss * 1024  # Linux reports kibibytes


def summary(report: dict[str, Any], wall: float, rss: int) -> dict[str, Any]:
    usage = report["usage"]
    calls = [c for c in usage["log"] if c["ok"]]
    for call in usage["log"]:
        prompt_s = (call.get("prompt_ms") or 0) / 1000
        print(
            f"  {call['step']:<28} prompt {call['prompt_tokens']:>5}  evaluated "
            f"{call['prompt_tokens'] - (call['cached_tokens'] or 0):>5}  completion "
            f"{call['completion_tokens']:>4}  {call['latency_ms'] / 1000:6.1f} s "
            f"(reading {prompt_s:5.1f} s)  {'ok' if call['ok'] else call['error'][:50]}"
        )
    for ruling in report["debate"]["rulings"]:
        s, c = ruling.get("stop_margin"), ruling.get("label_confidence")
        print(
            f"  ruling after round {ruling['round']}: {ruling.get('outcome')} -> "
            f"{ruling['decision']}  s={s}  c={c}"
        )
    llm_s = sum(c["latency_ms"] for c in usage["log"]) / 1000
    prompt_s = sum(c.get("prompt_ms") or 0 for c in calls) / 1000
    timings = report["timings"]
    stages = {k.removesuffix("_ms"): round(v / 1000, 1) for k, v in timings.items()}
    print("  stages (s): " + ", ".join(f"{k} {v}" for k, v in stages.items() if "." not in k))
    return {
        "check_s": round(timings["total_ms"] / 1000, 1),
        # the verdict shown: before the debate when the evidence fixed it, else the whole
        "verdict_s": round(timings.get("verdict_ms", timings["total_ms"]) / 1000, 1),
        "process_s": round(wall, 1),
        "calls": usage["calls"],
        "failed_calls": usage["failed_calls"],
        "completion_tokens": usage["completion_tokens"],
        "prompt_tokens": usage["prompt_tokens"],
        "prompt_tokens_evaluated": usage["prompt_tokens"] - usage["cached_tokens"],
        "llm_s": round(llm_s, 1),
        "reading_prompts_s": round(prompt_s, 1),
        "generating_s": round(llm_s - prompt_s, 1),
        "rounds": report["debate"]["rounds"],
        "stopped_by": report["debate"].get("stopped_by", ""),
        "peak_rss_mb": round(rss / 2**20),
        "verdict": report["verdict"],
        "confidence": report["confidence"]["value"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--only", choices=list(DEPTHS))
    parser.add_argument("--keep", type=Path, default=KEEP, help="where the reports are kept")
    smallest = {
        "words": 60,
        "data": sample_file("politifact_fnn.jsonl"),
        "only": "adaptive",
        "keep": sample_data,
    }
    args = smoke_args(parser, smallest)
    item_id, text = article(args.data, args.words)
    result: dict[str, Any] = {"item": item_id, "words": len(text.split())}
    with contextlib.ExitStack() as stack:
        llm = stack.enter_context(fake_llm()).env if args.smoke else {}
        for name, overrides in DEPTHS.items():
            if args.only not in (None, name):
                continue
            print(f"{name}:", flush=True)
            report, wall, rss = run_check(text, overrides | llm)
            saved = args.keep / f"embedded_check-{name}.json"
            saved.write_text(json.dumps(report, indent=1), encoding="utf-8")
            result[name] = summary(report, wall, rss)
    if "adaptive" in result and "full" in result:
        result["ratio"] = round(result["adaptive"]["check_s"] / result["full"]["check_s"], 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
