"""Where a cited sentence stops being about its claim: MiniLM cosines measured on the
common-knowledge claims.

For each claim of ``bench/data/common_claims.jsonl``, Stage 1 runs on the claim alone
(offline Wikipedia, no web) and every evidence sentence is encoded as a check encodes
it. The sentence of the claim's settling article closest to the claim is the one a
reading should cite; the sentences of the other articles Stage 1 found are on other
subjects. The threshold keeps at least 95 % of the settling sentences; the script
prints how many off-subject sentences still pass it.

    python bench/citation_threshold.py [--claims PATH] [--smoke]

The last line is one JSON object: ``claims``, ``settling_p05`` / ``settling_p50`` (the
settling sentence's cosine), ``threshold`` (``settling_p05`` rounded down to 0.05),
``other_above_threshold`` (the share of off-subject sentences at or above it) and the
same share at the engine's default (``min_citation_similarity``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
from pathlib import Path

import numpy as np
from lib.smoke import sample_file, smoke_args

from zofia_engine.agents.context import evidence_items
from zofia_engine.agents.evidence_sentences import SentenceIndex
from zofia_engine.config import AgentSettings, EngineSettings
from zofia_engine.retrieval.ner.sentences import split_sentences
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval

CLAIMS = Path(__file__).parent / "data" / "common_claims.jsonl"


async def measure(rows: list[dict[str, str]]) -> tuple[list[float], list[float]]:
    settling, other = [], []
    async with EntityGuidedRetrieval(EngineSettings(), search_backends=[]) as stage1:
        await stage1.load()
        for row in rows:
            found = await stage1.run(row["claim"], web=False)
            items = evidence_items(found)
            index = SentenceIndex.build(items, split_sentences, stage1.encoder)
            if not index.sentences:
                continue
            [claim] = stage1.encoder.encode([row["claim"]])
            sims = index.vectors @ (claim / max(float(np.linalg.norm(claim)), 1e-12))
            titles = {item.id: item.title for item in items}
            own = [
                float(s)
                for s, sentence in zip(sims, index.sentences, strict=True)
                if titles[sentence.evidence_id] == row["article"]
            ]
            if own:
                settling.append(max(own))
            other += [
                float(s)
                for s, sentence in zip(sims, index.sentences, strict=True)
                if titles[sentence.evidence_id] != row["article"]
            ]
    return settling, other


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=Path, default=CLAIMS)
    args = smoke_args(parser, {"claims": sample_file("common_claims.jsonl")})
    rows = [json.loads(line) for line in args.claims.open(encoding="utf-8")]
    settling, other = asyncio.run(measure(rows))
    p05, p50 = (float(np.percentile(settling, q)) for q in (5, 50))
    threshold = math.floor(p05 * 20) / 20
    default = AgentSettings().min_citation_similarity

    def above(t: float) -> float:
        return round(sum(o >= t for o in other) / max(1, len(other)), 3)

    print(
        json.dumps(
            {
                "claims": len(settling),
                "settling_p05": round(p05, 3),
                "settling_p50": round(p50, 3),
                "threshold": threshold,
                "other_sentences": len(other),
                "other_above_threshold": above(threshold),
                "default_threshold": default,
                "other_above_default": above(default),
            }
        )
    )


if __name__ == "__main__":
    main()
