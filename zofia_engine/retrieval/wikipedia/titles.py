"""Comparing keywords with article titles, shared by both Wikipedia backends."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["is_sense_of", "normalize_title", "without_disambiguator"]

_DISAMBIGUATOR = re.compile(r"\s*\([^()]*\)\s*$")
# Removed without a trace, so "D.C." is "dc" and "Newton's" is "newtons".
_JOINERS = frozenset(".'\u2019\u02bc")
# Letters that NFKD does not decompose into a base letter plus an accent.
_FOLD = str.maketrans(
    {"ø": "o", "ł": "l", "đ": "d", "ħ": "h", "ı": "i", "æ": "ae", "œ": "oe", "þ": "th"}
)


def normalize_title(text: str) -> str:
    """The form titles and keywords are compared in.

    Args:
        text: a title or keyword.

    Returns:
        Lower-case ASCII-ish words separated by single spaces, without accents,
        punctuation or a leading "the".
    """
    chars: list[str] = []
    for ch in unicodedata.normalize("NFKD", text.casefold().translate(_FOLD)):
        if ch in _JOINERS or unicodedata.combining(ch):
            continue
        chars.append(ch if ch.isalnum() else " ")
    words = "".join(chars).split()
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    return " ".join(words)


def without_disambiguator(title: str) -> str:
    """``"Dune (novel)"`` → ``"Dune"``; a title that is only a parenthesis stays."""
    return _DISAMBIGUATOR.sub("", title) or title


def is_sense_of(keyword: str, title: str) -> bool:
    """Whether ``title`` can name ``keyword``: it has at least half of its words.

    "Apple" fits "Apple Inc." and "Apple (fruit)"; "Biden" fits "Joe Biden";
    "Volvo Cars" fits "AB Volvo", the other Volvo; "Gothenburg" does not fit
    "Volvo Cars", a page full-text search finds because its text mentions the city.
    """
    words = set(normalize_title(keyword).split())
    shared = words & set(normalize_title(title).split())
    return bool(words) and 2 * len(shared) >= len(words)
