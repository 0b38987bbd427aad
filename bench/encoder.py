"""SBERT encoding of the salience strings: batching strategies and where the time goes.

For the first N articles of ../shared/data/politifact_fnn.jsonl, builds the
strings eq. 3 encodes (the three-sentence context of every sentence, plus the
post) and times one encode per post with all-MiniLM-L6-v2:

- ``fixed_<n>``: sentence-transformers' own batching, ``n`` rows per batch;
- ``grouped``: the engine's encoder, batches grouped by token length.

Then profiles the grouped run and reports the share of encoder time inside
``torch.nn.functional.linear`` and the rate of linear-layer arithmetic.

    python bench/encoder.py [--limit 30] [--smoke]

The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from lib.smoke import sample_file, smoke_args

from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.retrieval.ner.sentences import split_sentences
from zofia_engine.retrieval.salience import local_context

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "politifact_fnn.jsonl"
# all-MiniLM-L6-v2: 6 layers of 4·384² (attention) + 2·384·1536 (feed-forward) weights,
# 2 FLOPs per weight per token.
LINEAR_FLOPS_PER_TOKEN = 6 * (4 * 384 * 384 + 2 * 384 * 1536) * 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = smoke_args(parser, {"limit": 1, "data": sample_file("politifact_fnn.jsonl")})
    texts = [json.loads(line)["text"] for line in args.data.open(encoding="utf-8")][: args.limit]
    posts = []
    for text in texts:
        sentences = split_sentences(text)
        posts.append([local_context(sentences, j) for j in range(len(sentences))] + [text])

    encoder = SentenceTransformerEncoder()
    model = encoder.load()

    def fixed(batch: int) -> Callable[[list[str]], object]:
        def encode(strings: list[str]) -> object:
            return model.encode(strings, batch_size=batch, show_progress_bar=False)

        return encode

    runs = {f"fixed_{n}": fixed(n) for n in (1, 4, 16)}
    runs["grouped"] = encoder.encode
    figures: dict[str, object] = {"posts": len(posts)}
    for name, encode in runs.items():
        encode(posts[0])  # warm-up
        times = []
        for strings in posts:
            started = time.perf_counter()
            encode(strings)
            times.append(time.perf_counter() - started)
        figures[f"{name}_p50_ms"] = round(statistics.median(times) * 1000, 1)
        print(f"{name:>9}: p50 {figures[f'{name}_p50_ms']} ms per post")

    limit = model.max_seq_length
    assert limit is not None  # MiniLM reads at most 256 tokens
    tokens = sum(
        min(limit, len(ids))
        for strings in posts
        for ids in model.tokenizer(strings, verbose=False)["input_ids"]
    )
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    for strings in posts:
        encoder.encode(strings)
    profile.disable()
    total = time.perf_counter() - started
    linear = sum(
        row[2]  # total time of the function itself
        for func, row in pstats.Stats(profile).stats.items()  # type: ignore[attr-defined]
        if func[2] == "<built-in method torch._C._nn.linear>"
    )
    figures["tokens"] = tokens
    figures["linear_share"] = round(linear / total, 3)
    figures["linear_gflops"] = round(tokens * LINEAR_FLOPS_PER_TOKEN / linear / 1e9, 1)
    print(
        f"linear layers: {figures['linear_share']:.0%} of encoder time, "
        f"{figures['linear_gflops']} GFLOP/s"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
