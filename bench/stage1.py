"""Stage 1 speed on real articles with the embedded models.

Runs entity-guided retrieval (spaCy NER with beam confidences, all-MiniLM-L6-v2,
offline Wikipedia; no web backend, so no network time) on the first N articles
of ../shared/data/politifact_fnn.jsonl after a warm-up, and prints per-post
latency percentiles, the share of Stage-1 time spent inside model forward
passes (NER, salience encoding, disambiguation encoding), and peak RSS.

    python bench/stage1.py [--limit 50] [--data PATH] [--config zofia.toml] [--smoke]
                           [--claims bench/data/common_claims.jsonl]

Then it measures Wikipedia recall on short common-knowledge claims (``--claims``,
JSON lines with ``claim``, ``label`` and ``article``, the exact title of the one
article that settles the claim): the share of claims whose article is among
Stage 1's Wikipedia evidence. The claims it misses are printed.

The last line is one JSON object: p50_ms, p95_ms, model_share, peak_rss_mb,
how many keywords SC-MMR chose (mean, and how many posts got each count),
wiki_recall (0..1) and wiki_claims (how many claims it was measured on).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import time
from collections import Counter
from pathlib import Path

from lib.smoke import sample_file, smoke_args

from zofia_engine.config import EngineSettings, load_config
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "politifact_fnn.jsonl"
DEFAULT_CLAIMS = Path(__file__).resolve().parent / "data" / "common_claims.jsonl"
# Wall time of the model phases: NER (with the post encoded alongside), salience, eq. 7.
MODEL_KEYS = ("ner_and_text_ms", "salience_ms", "disambiguation_ms")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def wiki_misses(
    stage1: EntityGuidedRetrieval, claims: list[dict[str, str]]
) -> list[tuple[dict[str, str], list[str]]]:
    """The claims whose settling article is not among Stage 1's Wikipedia evidence,
    each with the titles Stage 1 did bring."""
    misses = []
    for claim in claims:
        result = await stage1.run(claim["claim"], web=False)
        titles = [entry.title for entry in result.wikipedia]
        if claim["article"] not in titles:
            misses.append((claim, titles))
    return misses


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--config", type=Path, default=None, help="TOML settings file")
    parser.add_argument(
        "--claims", type=Path, default=DEFAULT_CLAIMS, help="claims for wiki_recall (JSONL)"
    )
    args = smoke_args(
        parser,
        {
            "limit": 2,
            "warmup": 1,
            "data": sample_file("politifact_fnn.jsonl"),
            "claims": sample_file("common_claims.jsonl"),
        },
    )
    claims = [json.loads(line) for line in args.claims.open(encoding="utf-8") if line.strip()]

    rows = [json.loads(line) for line in args.data.open(encoding="utf-8")][: args.limit]
    texts = [r["text"] for r in rows]
    settings: EngineSettings = load_config(args.config)  # ZOFIA__... variables apply too
    async with EntityGuidedRetrieval(settings, search_backends=[]) as stage1:
        t = time.perf_counter()
        await stage1.load()
        load_s = time.perf_counter() - t
        for text in texts[: args.warmup]:
            await stage1.run(text)
        totals, model, keywords = [], [], []
        for text in texts:
            result = await stage1.run(text)
            totals.append(result.timings_ms["total_ms"])
            model.append(sum(result.timings_ms.get(k, 0.0) for k in MODEL_KEYS))
            keywords.append(len(result.keywords))
        misses = await wiki_misses(stage1, claims)

    figures = {
        "posts": len(texts),
        "words_median": statistics.median(len(t.split()) for t in texts),
        "load_s": round(load_s, 2),
        "p50_ms": round(percentile(totals, 0.5), 1),
        "p95_ms": round(percentile(totals, 0.95), 1),
        "mean_ms": round(statistics.fmean(totals), 1),
        "model_share": round(sum(model) / sum(totals), 3),
        "keywords_mean": round(statistics.fmean(keywords), 2),
        "keywords_per_post": dict(sorted(Counter(keywords).items())),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "wiki_recall": round(1 - len(misses) / len(claims), 4) if claims else None,
        "wiki_claims": len(claims),
    }
    for claim, titles in misses:
        print(f"miss: {claim['article']!r} not in {titles} for: {claim['claim']}")
    for name, value in figures.items():
        print(f"{name:>14}: {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    asyncio.run(main())
