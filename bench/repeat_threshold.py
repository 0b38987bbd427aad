"""Where a debate text starts to repeat an earlier one: word-trigram containment
measured on real debates of the embedded model.

Reads check reports (default: ``bench/eval/embedded_check-full.json``, whose debate at
the full depth shows every turn, repeats included) and, for each debate text (a
rebuttal or an argument), its containment in every earlier text of the check (the
linguist's and expert's analyses, the earlier turns): the share of its word trigrams
found there. Copies sit near 1; texts that say something new lower. The threshold is
chosen in the widest gap between the two groups, and the script prints both.

    python bench/repeat_threshold.py [REPORT.json ...] [--smoke]

The last line is one JSON object: ``texts``, ``pairs``, ``copies`` (containment ≥ 0.95),
``highest_below_copies``, ``threshold`` (the middle of the gap), and the share of texts
the engine's default threshold (``repeat_threshold``) would blank.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from lib.smoke import smoke_args

from zofia_engine.agents.novelty import containment, shingles
from zofia_engine.config import DebateSettings

DEFAULT = Path(__file__).parent / "eval" / "embedded_check-full.json"


def texts_of(report: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The analyses shown before the debate, and the debate's texts in order."""
    analyses = [f["analysis"] for f in report["analyses"]["linguist"] if f["analysis"]]
    expert = report["analyses"].get("expert") or {}
    analyses += [expert.get("knowledge_concordance", ""), expert.get("logical_integrity", "")]
    turns = [t[k] for t in report["debate"]["turns"] for k in ("rebuttal", "argument") if t[k]]
    return [a for a in analyses if a], turns


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("reports", nargs="*", type=Path, default=[DEFAULT], metavar="REPORT")
    paths = smoke_args(parser, {}).reports  # no smaller run: it reads the kept reports
    best: list[float] = []
    pairs = 0
    for path in paths:
        analyses, turns = texts_of(json.loads(path.read_text(encoding="utf-8")))
        earlier = [shingles(a) for a in analyses]
        for text in turns:
            new = shingles(text)
            scores = [containment(new, old) for old in earlier] or [0.0]
            pairs += len(earlier)
            best.append(max(scores))
            print(f"{max(scores):.2f}  {text[:90]}")
            earlier.append(new)
    copies = [b for b in best if b >= 0.95]
    rest = sorted(b for b in best if b < 0.95)
    below = rest[-1] if rest else 0.0
    threshold = round((below + (min(copies) if copies else 1.0)) / 2, 2)
    default = DebateSettings().repeat_threshold
    print(
        json.dumps(
            {
                "texts": len(best),
                "pairs": pairs,
                "copies": len(copies),
                "highest_below_copies": round(below, 3),
                "threshold": threshold,
                "default_threshold": default,
                "blanked_at_default": round(sum(b >= default for b in best) / max(1, len(best)), 3),
            }
        )
    )


if __name__ == "__main__":
    main()
