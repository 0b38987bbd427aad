"""How well the claim reader settles common-knowledge claims on the embedded defaults.

For each claim of ``bench/data/common_claims.jsonl`` (true and false claims, each
settled by a named article of the offline Wikipedia summaries): Stage 1 on the claim
alone (spaCy, MiniLM, offline Wikipedia, no web), the engine's shortlist of evidence
sentences, and one reading by the embedded model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M),
exactly as a check reads its core claim. A true claim is read right when the reading
``supports`` it, a false one when it ``refutes`` it; "not enough information" is an
abstention, a reading the other way is wrong.

    python bench/reader_accuracy.py [--limit 20] [--skip 0] [--claims PATH] [--smoke]

``--smoke``: two made-up claims, read by the fake OpenAI server's scripted replies
instead of the embedded model.

(``ZOFIA__AGENTS__CONTRADICTION_AT=1.1`` runs the reading alone.)

The last line is one JSON object: ``claims``, ``right``, ``wrong``, ``abstained``,
``accuracy`` (right / claims), ``settled_accuracy`` (right / (right + wrong)),
``dropped_citations`` and ``mean_read_s``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import time
from pathlib import Path

from lib.smoke import fake_llm, sample_file, smoke_args

from zofia_engine.agents.context import PanelContext, evidence_items
from zofia_engine.agents.evidence_sentences import SentenceIndex
from zofia_engine.agents.reading import ReadingRules, read_claims
from zofia_engine.config import EngineSettings, load_config
from zofia_engine.llm.router import LLMRouter
from zofia_engine.report import ClaimResult
from zofia_engine.retrieval.ner.sentences import split_sentences
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval

CLAIMS = Path(__file__).parent / "data" / "common_claims.jsonl"
WANTED = {"true": "supports", "false": "refutes"}


async def read_one(
    claim: str, stage1: EntityGuidedRetrieval, router: LLMRouter, settings: EngineSettings
) -> ClaimResult:
    """The core claim ``claim`` read as a check reads it, over Stage 1's evidence."""
    a = settings.agents
    found = await stage1.run(claim, web=False)
    panel = PanelContext(claim)
    panel.evidence = evidence_items(found)
    encoder = stage1.encoder
    index = await asyncio.to_thread(SentenceIndex.build, panel.evidence, split_sentences, encoder)
    panel.show(index.shortlist([claim], encoder, top_k=a.top_k_sentences, theta=a.theta_sim))
    core = ClaimResult(id="claim-0", kind="core", text=claim, sentence=1)
    at = a.contradiction_at if a.contradiction_at <= 1 else None
    rules = ReadingRules.of(a)
    [read] = await read_claims(router.session(), panel, [core], encoder, rules, contradiction_at=at)
    return read


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--claims", type=Path, default=CLAIMS)
    parser.add_argument("--skip", type=int, default=0, help="leave out the first N (tuning)")
    args = smoke_args(parser, {"limit": 2, "claims": sample_file("common_claims.jsonl")})
    with contextlib.ExitStack() as stack:
        if args.smoke:
            os.environ.update(stack.enter_context(fake_llm()).env)
        figures = await read_all(args)
    print(json.dumps(figures))


async def read_all(args: argparse.Namespace) -> dict[str, object]:
    """The claims of ``args`` read, and what the readings came to."""
    rows = [json.loads(line) for line in args.claims.open(encoding="utf-8")]
    # Alternate true and false claims, so that a limit keeps both.
    true = [r for r in rows if r["label"] == "true"]
    false = [r for r in rows if r["label"] == "false"]
    rows = [r for pair in zip(true, false, strict=False) for r in pair]
    rows = rows[args.skip : args.skip + args.limit]
    settings: EngineSettings = load_config(None)  # ZOFIA__... variables apply
    router = LLMRouter(settings.llm)
    counts = {"right": 0, "wrong": 0, "abstained": 0}
    dropped, seconds = 0, []
    async with EntityGuidedRetrieval(settings, search_backends=[]) as stage1:
        await stage1.load()
        await router.load()
        for row in rows:
            started = time.perf_counter()
            read = await read_one(row["claim"], stage1, router, settings)
            seconds.append(time.perf_counter() - started)
            label = read.label or "not enough information"
            outcome = (
                "abstained"
                if label == "not enough information"
                else "right"
                if label == WANTED[row["label"]]
                else "wrong"
            )
            counts[outcome] += 1
            dropped += read.dropped_quotes
            cited = read.reason[:160]
            print(f"{outcome:9} {row['label']:5} {label:22} {row['claim'][:60]} | {cited}")
        await router.aclose()
    settled = counts["right"] + counts["wrong"]
    return {
        "claims": len(rows),
        **counts,
        "accuracy": round(counts["right"] / max(1, len(rows)), 3),
        "settled_accuracy": round(counts["right"] / max(1, settled), 3),
        "dropped_citations": dropped,
        "mean_read_s": round(sum(seconds) / max(1, len(seconds)), 2),
    }


if __name__ == "__main__":
    asyncio.run(main())
