"""Ranks as values: "the second-largest", "the most populous", "the third", "15th".

A rank has a place (1 when only a superlative names it) and a scale (the superlative:
"largest", "most populous"; none for a bare ordinal). Ranks on one scale compare by
place; a superlative and its opposite ("largest", "smallest"; "most", "least
populous") cannot both hold; ranks on different scales ("largest", "oldest") say
nothing of each other.
"""

from __future__ import annotations

import re

from .values import Comparison

__all__ = ["compare_ranks", "rank_of"]

_ORDINAL_WORDS = {
    w: n
    for n, w in enumerate(
        [
            "first",
            "second",
            "third",
            "fourth",
            "fifth",
            "sixth",
            "seventh",
            "eighth",
            "ninth",
            "tenth",
            "eleventh",
            "twelfth",
        ],
        1,
    )
}
_OPPOSITE_RANKS = [
    {"largest", "biggest", "smallest"},
    {"longest", "shortest"},
    {"highest", "lowest"},
    {"tallest", "shortest"},
    {"oldest", "youngest", "newest"},
    {"deepest", "shallowest"},
    {"heaviest", "lightest"},
    {"hottest", "coldest"},
    {"earliest", "latest"},
    {"richest", "poorest"},
    {"fastest", "slowest"},
    {"strongest", "weakest"},
    {"best", "worst"},
    {"northernmost", "southernmost"},
    {"easternmost", "westernmost"},
]
_SAME_RANK = [{"largest", "biggest"}]


def rank_of(text: str) -> tuple[int, str] | None:
    """A rank: its place (1 when only a superlative names it) and its superlative, the
    adjective with "most"/"least" ("" for a bare ordinal): "second-largest" → (2,
    "largest"), "the most populous" → (1, "most populous"), "third" → (3, ""), "15th" →
    (15, ""); ``None`` when ``text`` ranks nothing."""
    words = re.findall(r"[a-z]+|\d+(?:st|nd|rd|th)", text.casefold())
    place, adjective = 0, ""
    for i, w in enumerate(words):
        if w in _ORDINAL_WORDS:
            place = _ORDINAL_WORDS[w]
        elif re.fullmatch(r"\d+(st|nd|rd|th)", w):
            place = int(re.sub(r"\D", "", w))
        elif w in ("most", "least") and i + 1 < len(words):
            adjective = f"{w} {words[i + 1]}"
            break
        elif (w.endswith("est") and len(w) > 4) or w in ("best", "worst"):
            adjective = w
            break
    if not place and not adjective:
        return None
    return (place or 1), adjective


def compare_ranks(claimed: str, found: str) -> Comparison:
    """Ranks of one kind compare by place ("second" differs from "fourth"); a
    superlative against its opposite differs ("largest", "smallest"); ranks on other
    scales ("largest", "oldest"), or a bare ordinal against a superlative, are
    unstated."""
    mine, theirs = rank_of(claimed), rank_of(found)
    if mine is None or theirs is None:
        return "unstated"
    (n, a), (m, b) = mine, theirs
    if a == b or any(a in g and b in g for g in _SAME_RANK):
        return "agrees" if n == m else "differs"
    if a and b and any(a in g and b in g for g in _OPPOSITE_RANKS):
        return "differs"
    if a.split()[-1:] == b.split()[-1:] and a.split()[:1] != b.split()[:1] and a and b:
        return "differs"  # "most populous", "least populous"
    return "unstated"
