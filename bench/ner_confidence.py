"""spaCy beam width: NER cost per post against the spread of its confidences.

For each beam width, runs the spaCy backend on the first N articles of
../shared/data/politifact_fnn.jsonl, aggregates tokens into entity units
(eq. 2) and prints milliseconds per post and the share of units whose
confidence is under 0.99 and under 0.8 (the paper's initial threshold).

    python bench/ner_confidence.py [--limit 50] [--widths 4 8 16] [--smoke]

The last line is one JSON object keyed by beam width.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from lib.smoke import sample_file, smoke_args

from zofia_engine.retrieval.entities import aggregate_units
from zofia_engine.retrieval.ner.spacy_backend import SpacyNER

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "politifact_fnn.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--widths", type=int, nargs="+", default=[4, 8, 16])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = smoke_args(
        parser, {"limit": 2, "widths": [4], "data": sample_file("politifact_fnn.jsonl")}
    )
    texts = [json.loads(line)["text"] for line in args.data.open(encoding="utf-8")][: args.limit]

    figures = {}
    for width in args.widths:
        ner = SpacyNER(beam_width=width)
        ner.load()
        ner.recognize(texts[0])  # warm-up
        confidences: list[float] = []
        started = time.perf_counter()
        for text in texts:
            out = ner.recognize(text)
            confidences += [u.confidence for u in aggregate_units(out.tokens, text)]
        per_post = (time.perf_counter() - started) / len(texts) * 1000
        figures[str(width)] = {
            "ms_per_post": round(per_post, 1),
            "units": len(confidences),
            "under_0.99": round(sum(c < 0.99 for c in confidences) / len(confidences), 3),
            "under_0.8": round(sum(c < 0.8 for c in confidences) / len(confidences), 3),
        }
        print(f"beam {width:>2}: {figures[str(width)]}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
