"""Whether a debate turn says anything new: word-trigram containment.

A small model under a grammar often copies: a rebuttal that is the linguist's text, a
round's argument that is the last round's. A text repeats an earlier one when at least
``threshold`` of its word trigrams occur in that earlier text (containment, not
Jaccard: a short turn copied into a longer one still counts). Texts of fewer than three
words are compared word by word. The default threshold is measured (see
``bench/repeat_threshold.py`` and the README's "Debate" section).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["Novelty", "containment", "shingles"]

_WORD = re.compile(r"\w+")
N = 3


def shingles(text: str) -> frozenset[tuple[str, ...]]:
    """The word trigrams of ``text`` (casefolded; its words, with fewer than three)."""
    words = [w.casefold() for w in _WORD.findall(text)]
    if len(words) < N:
        return frozenset((w,) for w in words)
    return frozenset(tuple(words[i : i + N]) for i in range(len(words) - N + 1))


def containment(new: frozenset[tuple[str, ...]], old: frozenset[tuple[str, ...]]) -> float:
    """The share of ``new``'s shingles found in ``old`` (0 for an empty ``new``)."""
    return len(new & old) / len(new) if new else 0.0


class Novelty:
    """The texts a debate has already shown, and a test of whether a new one repeats them.

    Args:
        threshold: the containment from which a text counts as a repeat.
        seen: texts shown before the debate (the linguist's and expert's analyses).
    """

    def __init__(self, threshold: float, seen: Iterable[str] = ()) -> None:
        self.threshold = threshold
        self._seen: list[frozenset[tuple[str, ...]]] = []
        for text in seen:
            self.add(text)

    def repeats(self, text: str) -> bool:
        """``text`` says nothing the debate has not shown (an empty text repeats)."""
        new = shingles(text)
        if not new:
            return True
        return any(containment(new, old) >= self.threshold for old in self._seen)

    def add(self, text: str) -> None:
        if text.strip():
            self._seen.append(shingles(text))

    def fresh(self, text: str) -> str:
        """``text`` if it is new (and now seen), else ``""``."""
        if self.repeats(text):
            return ""
        self.add(text)
        return text
