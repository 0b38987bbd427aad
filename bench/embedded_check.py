"""One real ``zofia check`` on the embedded defaults, timed from the outside.

Runs the installed ``zofia check --json --file`` (a fresh process: model loads
included) on a ~300-word article from ../shared/data/politifact_fnn.jsonl
(the first item with at least that many words, cut to 300), with no config:
spaCy, MiniLM, offline Wikipedia, no web search, and the embedded
Qwen2.5-Coder-1.5B-Instruct Q4_K_M through llama.cpp. Prints the wall time,
the LLM calls, and how many prompt tokens llama.cpp actually evaluated against
how many the prompts held (the rest came from the reused KV prefix).

    python bench/embedded_check.py [--words 300] [--data PATH]

The last line is one JSON object: wall_s, llm_calls, prompt_tokens,
evaluated_prompt_tokens, evaluated_share, completion_tokens, seconds per
stage, the verdict and its confidence.
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

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "politifact_fnn.jsonl"


def article(data: Path, words: int) -> tuple[str, str]:
    with data.open(encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            text = item.get("text") or ""
            if len(text.split()) >= words:
                return item["id"], " ".join(text.split()[:words])
    raise SystemExit(f"no item of {data} has {words} words")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    item_id, text = article(args.data, args.words)
    zofia = Path(sys.executable).with_name("zofia")
    with tempfile.TemporaryDirectory() as tmp:
        post = Path(tmp) / "post.txt"
        post.write_text(text, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("ZOFIA")}
        started = time.perf_counter()
        done = subprocess.run(
            [str(zofia), "check", "--json", "--file", str(post)],
            cwd=tmp,  # no ./zofia.toml: the embedded defaults
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    report = json.loads(done.stdout)
    usage = report["usage"]
    evaluated = usage["prompt_tokens"] - usage["cached_tokens"]
    for call in usage["log"]:
        cached = call["cached_tokens"] or 0
        print(
            f"{call['step']:<32} prompt {call['prompt_tokens']:>5}  evaluated "
            f"{call['prompt_tokens'] - cached:>5}  completion {call['completion_tokens']:>4}  "
            f"{call['latency_ms'] / 1000:6.1f} s  {'ok' if call['ok'] else call['error'][:60]}"
        )
    stages = {
        k.removesuffix("_ms"): round(v / 1000, 1)
        for k, v in report["timings"].items()
        if not k.startswith("stage1.")
    }
    print(
        json.dumps(
            {
                "item": item_id,
                "words": len(text.split()),
                "wall_s": round(wall, 1),
                "llm_calls": usage["calls"],
                "failed_calls": usage["failed_calls"],
                "prompt_tokens": usage["prompt_tokens"],
                "evaluated_prompt_tokens": evaluated,
                "evaluated_share": round(evaluated / max(1, usage["prompt_tokens"]), 3),
                "completion_tokens": usage["completion_tokens"],
                "stages_s": stages,
                "rounds": report["debate"]["rounds"],
                "verdict": report["verdict"],
                "confidence": report["confidence"]["value"],
            }
        )
    )


if __name__ == "__main__":
    main()
