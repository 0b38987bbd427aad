"""Check the labelled claims of ``bench/data/common_claims.jsonl`` against the offline
Wikipedia summaries: each claim's ``article`` must exist, and for each true/false pair
(``pair``) the words the true claim has and the false one lacks (the fact that was
changed) must occur in the article's first three sentences, while the words only the
false claim has must not.

    python bench/lib/claims_check.py [--data PATH]

Prints one line per problem and a summary; exits 1 when an article is missing or a
pair's changed fact is not where it should be.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from zofia_engine.retrieval.ner.sentences import split_sentences
from zofia_engine.retrieval.wikipedia.offline import packaged_summaries
from zofia_engine.retrieval.wikipedia.titles import normalize_title

DEFAULT = Path(__file__).resolve().parents[1] / "data" / "common_claims.jsonl"
_SMALL = set(
    "a an the is was were are of in on at by to and from for his her its it as".split()  # noqa: SIM905
)


def _words(text: str) -> set[str]:
    return {w for w in normalize_title(re.sub(r"[^\w\s,.-]", " ", text)).split() if w not in _SMALL}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT)
    args = parser.parse_args()
    items = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    summaries = json.loads(packaged_summaries().read_text(encoding="utf-8"))
    problems = 0
    pairs: dict[int, dict[str, dict[str, str]]] = defaultdict(dict)
    for item in items:
        article = item.get("article", "")
        if article not in summaries:
            print(f"missing article {article!r}: {item['claim']}")
            problems += 1
        if "pair" in item:
            pairs[item["pair"]][item["label"]] = item
    for number, pair in sorted(pairs.items()):
        if set(pair) != {"true", "false"}:
            print(f"pair {number} is not one true and one false claim")
            problems += 1
            continue
        record = summaries.get(pair["true"]["article"])
        if record is None:
            continue
        lead = " ".join(split_sentences(record["extract"])[:3])
        known = _words(lead)
        right = _words(pair["true"]["claim"]) - _words(pair["false"]["claim"])
        wrong = _words(pair["false"]["claim"]) - _words(pair["true"]["claim"])
        if not right & known:
            print(f"pair {number}: none of {sorted(right)} is in the lead of {record['title']}")
            problems += 1
        if wrong & known:
            print(f"pair {number}: the false claim's {sorted(wrong & known)} is in the lead")
            problems += 1
    labels = Counter(i["label"] for i in items)
    kinds = Counter(i.get("kind", "?") for i in items)
    print(
        f"{len(items)} claims, {dict(labels)}, kinds {dict(kinds)}, {len(pairs)} pairs, "
        f"{problems} problems"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
