"""One real ``zofia check`` on the embedded defaults, timed from the outside, twice:
with the behaviour before the four outcomes and with today's defaults.

Runs the installed ``zofia check --json --file`` (a fresh process each time: model
loads included) on a ~300-word article from ../shared/data/politifact_fnn.jsonl
(the first item with at least that many words, cut to 300), with no config file:
spaCy, MiniLM, offline Wikipedia, no web search, and the embedded
Qwen2.5-Coder-1.5B-Instruct Q4_K_M through llama.cpp.

``before``: ZoFia's Algorithm 1 with the judge's word alone deciding when the debate
ends, no triage, no evidence rule (``ZOFIA__DEBATE__EARLY_STOP=judge``,
``ZOFIA__TRIAGE__ENABLED=false``, ``ZOFIA__AGENTS__REQUIRE_EVIDENCE=false``).
``after``: the defaults (RADAR's dual-threshold stop, triage, the evidence rule).

For each: the wall time, the LLM calls, the debate rounds, how the models' time
splits between reading prompts (until each call's first token) and generating, the
tokens, and the peak resident memory of the whole check process.

    python bench/embedded_check.py [--words 300] [--data PATH] [--only after]

The last line is one JSON object: ``before`` and ``after`` as above, and
``ratio`` = after / before wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "politifact_fnn.jsonl"
BEFORE = {
    "ZOFIA__DEBATE__EARLY_STOP": "judge",
    "ZOFIA__TRIAGE__ENABLED": "false",
    "ZOFIA__AGENTS__REQUIRE_EVIDENCE": "false",
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
    return {
        "wall_s": round(wall, 1),
        "llm_calls": usage["calls"],
        "failed_calls": usage["failed_calls"],
        "rounds": report["debate"]["rounds"],
        "stopped_by": report["debate"].get("stopped_by", ""),
        "llm_s": round(llm_s, 1),
        "reading_prompts_s": round(prompt_s, 1),
        "generating_s": round(llm_s - prompt_s, 1),
        "prompt_tokens": usage["prompt_tokens"],
        "evaluated_prompt_tokens": usage["prompt_tokens"] - usage["cached_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "peak_rss_gb": round(rss / 2**30, 2),
        "verdict": report["verdict"],
        "confidence": report["confidence"]["value"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--only", choices=["before", "after"])
    args = parser.parse_args()
    item_id, text = article(args.data, args.words)
    result: dict[str, Any] = {"item": item_id, "words": len(text.split())}
    for name, overrides in (("before", BEFORE), ("after", {})):
        if args.only not in (None, name):
            continue
        print(f"{name}:", flush=True)
        result[name] = summary(*run_check(text, overrides))
    if "before" in result and "after" in result:
        result["ratio"] = round(result["after"]["wall_s"] / result["before"]["wall_s"], 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
