"""Checks ``bench/data/common_claims.jsonl`` against the offline Wikipedia summaries the
engine ships: each claim's settling fact must be stated in the first three sentences of
its article, as the engine shows them as evidence.

For each claim: the article's text as :class:`OfflineWikipedia` returns it (the
``extract`` of the candidate whose title is exactly ``article``), split with the
engine's own splitter and cut to the engine's number of sentences
(``[wikipedia] sentences``, 3); then

- every checkable word of ``fact`` (the settling fact as the article states it: for a
  true claim what the claim says, for a false one the truth its changed fact replaced)
  must occur in those sentences;
- for a false claim, every checkable word of ``claimed`` (the changed fact as the claim
  states it) must occur in the claim; those that also occur in the sentences are
  printed as a note (a swap within the article, "liver" for "pancreatic islets"), not
  counted as a failure.

"Checkable" words are the words left after folding case and accents and dropping
punctuation, one-letter words and a short list of function words.

The file as a whole is checked too: the labels (exactly half ``true``), the fields
(``kind`` on every claim, ``changed`` on the false ones only, each ``pair`` joining one
true and one false claim about the same article), no repeated claim, and at most 15 %
landmarks.

    python bench/lib/claims_check.py [--claims PATH] [--failures-only]

It prints, per claim, the article's first three sentences and whether the fact's words
occur there; then every problem found. It exits 1 when an article is missing or any
check fails, else 0. The last line is one JSON object: ``claims``, ``true``, ``false``,
``kinds``, ``changed``, ``pairs``, ``missing_articles`` and ``problems``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zofia_engine.config import EngineSettings
from zofia_engine.retrieval.ner.sentences import split_sentences
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia

CLAIMS = Path(__file__).resolve().parents[1] / "data" / "common_claims.jsonl"
LABELS = ("true", "false")
KINDS = ("person", "place", "species", "work", "event", "organisation", "landmark", "concept")
CHANGES = ("place", "person", "nationality", "date", "number", "creator", "category")
MAX_LANDMARK_SHARE = 0.15
# fmt: off
STOPWORDS = frozenset({
    "the", "a", "an", "of", "in", "on", "at", "by", "and", "or", "to", "for", "is", "was",
    "were", "are", "be", "been", "its", "it", "as", "with", "from", "that", "which", "who",
    "this", "these", "those", "his", "her", "their", "he", "she", "they", "has", "have",
    "had", "into",
})
# fmt: on
_WORD = re.compile(r"\w+")


def checkable_words(text: str) -> list[str]:
    """The words of ``text`` a check compares: case and accents folded, punctuation,
    one-letter words and function words dropped, in order."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    return [w for w in _WORD.findall(plain) if len(w) > 1 and w not in STOPWORDS]


@dataclass
class Checked:
    """One claim against its article's first sentences."""

    row: dict[str, Any]
    sentences: list[str]
    missing: list[str] = field(default_factory=list)  # fact words not in the sentences
    unclaimed: list[str] = field(default_factory=list)  # claimed words not in the claim
    also_stated: list[str] = field(default_factory=list)  # claimed words the article has

    @property
    def ok(self) -> bool:
        return bool(self.sentences) and not self.missing and not self.unclaimed


def check_claim(row: dict[str, Any], extract: str | None, n: int) -> Checked:
    """``row`` against the first ``n`` sentences of ``extract`` (``None``: no article)."""
    if extract is None:
        return Checked(row, [])
    sentences = split_sentences(extract)[:n]
    stated = set(checkable_words(" ".join(sentences)))
    in_claim = set(checkable_words(str(row.get("claim", ""))))
    claimed = checkable_words(str(row.get("claimed", "")))
    return Checked(
        row,
        sentences,
        missing=[w for w in checkable_words(str(row.get("fact", ""))) if w not in stated],
        unclaimed=[w for w in claimed if w not in in_claim],
        also_stated=[w for w in claimed if w in stated],
    )


def field_problems(i: int, row: dict[str, Any]) -> list[str]:
    """What is wrong with the fields of claim number ``i`` (from 1)."""
    where = f"claim {i}"
    label, kind, changed = row.get("label"), row.get("kind"), row.get("changed")
    problems = [f"{where}: no {name}" for name in ("claim", "article", "fact") if not row.get(name)]
    if label not in LABELS:
        problems.append(f"{where}: label {label!r} is not one of {LABELS}")
    if kind not in KINDS:
        problems.append(f"{where}: kind {kind!r} is not one of {KINDS}")
    if label == "false" and changed not in CHANGES:
        problems.append(f"{where}: a false claim needs changed in {CHANGES}, not {changed!r}")
    if label == "false" and not row.get("claimed"):
        problems.append(f"{where}: a false claim needs claimed (the changed fact as written)")
    if label == "true" and ("changed" in row or "claimed" in row):
        problems.append(f"{where}: a true claim has no changed or claimed fact")
    return problems


def set_problems(rows: list[dict[str, Any]]) -> list[str]:
    """What is wrong with the file as a whole: balance, pairs, repeats, landmarks."""
    problems = []
    labels = Counter(r.get("label") for r in rows)
    if labels["true"] != labels["false"]:
        problems.append(f"labels are not half and half: {dict(labels)}")
    pairs: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        if "pair" in row:
            pairs.setdefault(row["pair"], []).append(row)
    for key, members in pairs.items():
        if sorted(str(m.get("label")) for m in members) != ["false", "true"]:
            problems.append(f"pair {key}: needs one true and one false claim")
        elif len({m.get("article") for m in members}) != 1:
            problems.append(f"pair {key}: its claims name different articles")
    seen: dict[str, int] = {}
    for i, row in enumerate(rows, 1):
        text = " ".join(checkable_words(str(row.get("claim", ""))))
        if text in seen:
            problems.append(f"claim {i} repeats claim {seen[text]}")
        seen.setdefault(text, i)
    landmarks = sum(1 for r in rows if r.get("kind") == "landmark")
    if rows and landmarks / len(rows) > MAX_LANDMARK_SHARE:
        problems.append(f"{landmarks} of {len(rows)} claims are landmarks (at most 15 %)")
    return problems


async def extracts(titles: set[str]) -> dict[str, str]:
    """Title → extract, as the engine's offline backend returns it, for the titles the
    summaries have (exactly that title)."""
    wiki = OfflineWikipedia()
    found = {}
    for title in sorted(titles):
        for candidate in await wiki.candidates(title, 10):
            if candidate.title == title:
                found[title] = candidate.extract
                break
    return found


def show(i: int, checked: Checked, verbose: bool) -> None:
    row = checked.row
    if not verbose and checked.ok:
        return
    status = "ok" if checked.ok else "FAIL"
    print(f"[{i}] {status} {row.get('label')} {row.get('kind')}: {row.get('claim')}")
    if not checked.sentences:
        print(f"    no article titled {row.get('article')!r} in the summaries")
        return
    for n, sentence in enumerate(checked.sentences, 1):
        print(f"    {n}. {sentence}")
    print(f"    fact: {row.get('fact')!r}", end="")
    print(f"  (not in the sentences: {checked.missing})" if checked.missing else "  (all stated)")
    if row.get("claimed"):
        print(f"    claimed: {row['claimed']!r}", end="")
        if checked.unclaimed:
            print(f"  (not in the claim: {checked.unclaimed})", end="")
        if checked.also_stated:
            print(f"  (note: the article also has {checked.also_stated})", end="")
        print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=Path, default=CLAIMS)
    parser.add_argument(
        "--failures-only", action="store_true", help="print only the claims that fail"
    )
    args = parser.parse_args()
    lines = args.claims.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    n = EngineSettings().wikipedia.sentences
    found = asyncio.run(extracts({str(r.get("article", "")) for r in rows}))
    problems, missing = [], set()
    for i, row in enumerate(rows, 1):
        checked = check_claim(row, found.get(str(row.get("article", ""))), n)
        show(i, checked, not args.failures_only)
        problems += field_problems(i, row)
        if not checked.sentences:
            missing.add(str(row.get("article", "")))
        elif not checked.ok:
            problems.append(f"claim {i}: the fact check failed")
    problems += set_problems(rows)
    problems += [f"no article titled {title!r}" for title in sorted(missing)]
    for problem in problems:
        print(f"problem: {problem}")
    summary = {
        "claims": len(rows),
        "true": sum(1 for r in rows if r.get("label") == "true"),
        "false": sum(1 for r in rows if r.get("label") == "false"),
        "kinds": dict(Counter(str(r.get("kind")) for r in rows).most_common()),
        "changed": dict(Counter(str(r["changed"]) for r in rows if "changed" in r).most_common()),
        "pairs": len({r["pair"] for r in rows if "pair" in r}),
        "missing_articles": sorted(missing),
        "problems": len(problems),
    }
    print(json.dumps(summary, ensure_ascii=False))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
