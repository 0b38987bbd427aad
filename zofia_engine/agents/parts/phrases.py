"""Values the tagger does not give whole: spans of years and ranks.

spaCy's small model tags "from 1979 to 1990" as one date in one sentence and as two
("1979", "1990") in the next, and never tags "the *longest* river" at all. A claim's
span and a passage's span must be one value each to be compared as spans, and a rank
("the second-largest", "the most populous", "the third") is a checkable part of its
own. :func:`with_phrases` gives a parse's entities with each span of years merged into
one ``DATE`` and each rank added as a phrase labelled ``RANK`` (an ordinal next to a
superlative, "second-largest", is one rank). The claim's parts (:mod:`.claim`) and
the passage's options (:mod:`.passage`) both read them, so both sides see one value
the same way.
"""

from __future__ import annotations

import re

from ...retrieval.ner.parser import Parsed, Phrase

__all__ = ["RANK", "with_phrases"]

RANK = "RANK"
_SPAN = re.compile(
    r"(?:\b(?:from|between)\s+)?(?<![\d,.])(\d{3,4}(?:\s*(?:BC|BCE|AD|CE))?)\s*"
    r"(?:to|and|until|till|through|[–—-])\s*((?:[A-Z][a-z]+\s+)?\d{2,4})(?!\d)"
)
_AMOUNT = re.compile(
    r"\s*(?:%|(?:million|billion|trillion|thousand|hundred|per\s*cent|percent|km|m|kg|"
    r"miles?|metres?|meters?|feet|people|species|km2)\b)",
    re.IGNORECASE,
)
_NOT_RANK = frozenset(
    [
        "west",
        "interest",
        "honest",
        "modest",
        "forest",
        "earnest",
        "rest",
        "request",
        "guest",
        "chest",
        "quest",
        "test",
        "pest",
        "nest",
        "contest",
        "protest",
        "arrest",
        "harvest",
        "southwest",
        "northwest",
        "midwest",
    ]
)


def _span_phrases(parsed: Parsed) -> list[Phrase]:
    """Each span of years ("1979 to 1990", "1503–1519") as one ``DATE`` phrase, from its
    first year to its last (a "from" or "between" before it stays outside)."""
    found = []
    for m in _SPAN.finditer(parsed.text):
        start, end = m.start(1), m.end(2)
        if _AMOUNT.match(parsed.text[end:]):
            continue  # "100–400 billion stars": a range of amounts, not of years
        words = [i for i, w in enumerate(parsed.words) if w.start < end and start < w.end]
        if words:
            found.append(
                Phrase(parsed.text[start:end], "DATE", words[0], words[-1] + 1, start, end)
            )
    return found


def _superlative(text: str) -> bool:
    word = text.casefold()
    return (word.endswith("est") and len(word) > 4 and word not in _NOT_RANK) or word in (
        "best",
        "worst",
    )


def _rank_phrases(parsed: Parsed) -> list[Phrase]:
    """Each superlative that modifies a noun ("the *longest* river", "one of the *most
    luminous* stars"), with the ordinal before it ("second-largest"), as a ``RANK``."""
    words, text = parsed.words, parsed.text
    ordinals = {i for e in parsed.entities if e.label == "ORDINAL" for i in range(e.first, e.last)}
    found = []
    for i, w in enumerate(words):
        if w.dep not in ("amod", "advmod") or words[w.head].pos not in ("NOUN", "PROPN", "ADJ"):
            continue
        first = i
        if w.text.casefold() in ("most", "least") and w.dep == "advmod":
            continue  # taken with its adjective below
        if not _superlative(w.text):
            if not (i > 0 and words[i - 1].text.casefold() in ("most", "least")):
                continue
            first = i - 1
        while first > 0 and (first - 1 in ordinals or words[first - 1].text == "-"):
            first -= 1
        if words[first].text == "-":
            first += 1
        start, end = words[first].start, w.end
        found.append(Phrase(text[start:end], RANK, first, i + 1, start, end))
    return found


def _list_members(parsed: Parsed, entities: list[Phrase]) -> list[Phrase]:
    """Names joined to a tagged name by "and" or a comma that the tagger left untagged
    ("Japan, Korea and *Northern Ireland*"), each with the label of the name it is
    listed with: a list's every member is a value of the claim."""
    words = parsed.words
    covered = {i for e in entities for i in range(e.first, e.last)}
    label_at = {i: e.label for e in entities for i in range(e.first, e.last)}
    found = []
    for i, w in enumerate(words):
        if w.dep != "conj" or w.pos != "PROPN" or i in covered or w.head not in label_at:
            continue
        first = i
        while first > 0 and words[first - 1].dep == "compound" and words[first - 1].head == i:
            first -= 1
        start, end = words[first].start, w.end
        found.append(Phrase(parsed.text[start:end], label_at[w.head], first, i + 1, start, end))
        covered |= set(range(first, i + 1))
    return found


def with_phrases(parsed: Parsed) -> list[Phrase]:
    """``parsed``'s entities with each span of years merged into one date and each rank
    added (an ordinal inside a rank is the rank's), in text order."""
    spans = _span_phrases(parsed)
    ranks = _rank_phrases(parsed)

    def overlaps(e: Phrase, phrases: list[Phrase]) -> bool:
        return any(p.start < e.end and e.start < p.end for p in phrases)

    kept = [
        e
        for e in parsed.entities
        if not overlaps(e, spans)
        and not (e.label in ("ORDINAL", "CARDINAL", "DATE") and overlaps(e, ranks))
    ]
    members = _list_members(parsed, kept)
    return sorted([*kept, *members, *spans, *ranks], key=lambda p: p.start)
