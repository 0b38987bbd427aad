"""The LIAR-PLUS validation set as a local archive for ``web.corpus``, ratings removed.

One document per item (id: the item's id; title: the speaker; text: the
justification), with every sentence that states PolitiFact's rating dropped, so
the archive holds the reasoning but not the answer. The filter errs on the side
of dropping: a sentence naming a Truth-O-Meter rating, a rating verb ("we rate",
"earns ... rating", "our ruling"), a bare verdict ("False.", "... is mostly
true.") or the wording of PolitiFact's rating definitions goes; "a false claim"
in passing stays.

    python bench/liar_corpus.py [OUTPUT] [--data PATH] [--smoke]
    zofia corpus index corpus-liar-val.jsonl --output corpus-liar-val.db

The dataset is read where it lies and nothing of it is written into the
repository: OUTPUT defaults to ./corpus-liar-val.jsonl in the current directory.
The last line printed is one JSON object: documents, sentences kept and dropped,
and five dropped sentences as examples.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

# bench/lib's helpers, also when a test loads this file by its path
# (tests/engine/retrieval/test_corpus.py).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.smoke import sample_file, smoke_args

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "liar_plus_val.jsonl"

_VERDICT = r"(?:(?:mostly|half|barely)[-\s]+)?(?:true|false)"
RATING = re.compile(
    "|".join(
        [
            r"pants[-\s]+on[-\s]+fire",
            r"\b(?:mostly|half|barely)[-\s]+(?:true|false)\b",
            r"\w+-o-meter",  # Truth-O-Meter, Flip-O-Meter
            r"\bpolitifact\s+(?:rates?|rated|rating|ruled?|ruling|gives?|gave)\b",
            r"\bour\s+(?:\w+\s+){0,2}(?:rating|ruling)s?\b",
            r"\bwe\s+(?:(?:also|therefore|thus|still)\s+)?(?:rate|rated|rule|ruled)\b",
            r"\bwe\s+have\s+a\s+rating\b",
            r"\brat(?:e|es|ed|ing)\s+(?:it|(?:this|that|the|his|her|their|\w+['’]?s)\s+"
            r"(?:claim|statement|comment|remark|assertion|ad))\b",
            r"^\W*(?:the\s+)?(?:ruling|rating)\b\W",  # a section heading: "Ruling: ..."
            r"\b(?:earns?|earned|gets?|got|deserves?|merits?|receives?)\b.*\brating\b",
            r"\b(?:lowest|highest)\s+rating\b",
            # PolitiFact's definitions of its ratings, which give the rating away.
            r"\baccurate,?\s+but\b",
            r"\b(?:partially|not|isn['’]?t|isnt)\s+(?:(?:entirely|completely|quite)\s+)?accurate\b",
            r"\bnothing\s+significant(?:ly)?\s+missing\b",
            r"\belement\s+of\s+truth\b",
            r"\bignores\s+critical\s+facts\b",
            r"\bridiculous\s+claim\b",
            # A verdict as the sentence's last words: "False." or "The claim is false."
            rf"^\W*{_VERDICT}\W*$",
            rf"\b(?:is|was|as|it|find|found|rule|ruled|deem|deemed|call)\s+"
            rf"(?:(?:not|so|simply|just)\s+)?{_VERDICT}\W*$",
        ]
    ),
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")


def is_rating_sentence(sentence: str) -> bool:
    """True when ``sentence`` states (or gives away) a fact-checker's rating."""
    return bool(RATING.search(sentence.strip()))


def split_sentences(text: str) -> list[str]:
    """Sentences at ``.``, ``!`` or ``?`` followed by a space, and at line breaks."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def strip_ratings(text: str) -> tuple[list[str], list[str]]:
    """The sentences of ``text`` without rating statements, and those dropped."""
    kept: list[str] = []
    dropped: list[str] = []
    for sentence in split_sentences(text):
        (dropped if is_rating_sentence(sentence) else kept).append(sentence)
    return kept, dropped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path, nargs="?", default=Path("corpus-liar-val.jsonl"))
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    smallest = {"data": sample_file("liar_plus_val.jsonl"), "output": sample_file("corpus.jsonl")}
    args = smoke_args(parser, smallest)

    documents = kept_total = 0
    examples: list[str] = []
    dropped_total = 0
    with args.data.open(encoding="utf-8") as rows, args.output.open("w", encoding="utf-8") as out:
        for line in rows:
            if not line.strip():
                continue
            item = json.loads(line)
            kept, dropped = strip_ratings(item.get("justification") or "")
            kept_total += len(kept)
            dropped_total += len(dropped)
            examples.extend(dropped[: 5 - len(examples)])
            if not kept:
                continue  # nothing left but the rating
            document = {
                "id": str(item["id"]),
                "title": str(item.get("speaker") or "").replace("-", " "),
                "text": " ".join(kept),
            }
            out.write(json.dumps(document, ensure_ascii=False) + "\n")
            documents += 1
    print(f"wrote {documents} documents to {args.output}")
    summary = {
        "documents": documents,
        "sentences_kept": kept_total,
        "sentences_dropped": dropped_total,
        "dropped_examples": examples,
    }
    print(json.dumps(summary, ensure_ascii=False))


if __name__ == "__main__":
    main()
