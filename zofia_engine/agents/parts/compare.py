"""How a value a passage gives stands against a claim's part, by the part's kind:
places by what lies within what, nationalities by their country, dates as spans of
days (a span of years as a span), numbers within a tolerance, ranks by place and scale,
categories by their head word and meaning, other names by their words
(:mod:`.names`, :mod:`.values`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ports import TextEncoder
from ...records.reading import PartOutcome
from ...retrieval.wikipedia.gazetteer import STOPWORDS
from .claim import Part
from .names import NameKnowledge, compare_names, compare_nationalities, compare_places
from .ranks import compare_ranks
from .values import compare_dates, compare_numbers

__all__ = ["Comparer"]


@dataclass(frozen=True)
class Comparer:
    """Compares found values with a claim's parts: ``knowledge`` says which place lies
    in which; ``encoder`` and ``same_kind_at`` tell two category words for one kind of
    thing ("film", "movie") from two kinds ("mammal", "fish")."""

    knowledge: NameKnowledge
    encoder: TextEncoder
    same_kind_at: float = 0.5

    def compare(self, part: Part, found: str, text: str) -> PartOutcome:
        """``found`` (words of ``text``, the passage) against ``part``, as its kind
        compares."""
        match part.kind:
            case "place":
                names = [n.strip() for n in found.split(",")]
                return compare_places(part.names, names, self.knowledge)
            case "nationality":
                return compare_nationalities(part.text, found)
            case "date":
                return compare_dates(part.text, found)
            case "number":
                return compare_numbers(part.text, found)
            case "ordinal":
                return compare_ranks(part.text, found)
            case "category":
                return self.kinds(part, found, text)
            case _:
                return compare_names(part.text, found)

    def kinds(self, part: Part, found: str, passage: str) -> PartOutcome:
        """A category word against the passage's: the same head word agrees when the
        passage also has the claim's own words for its kind (the "bony" of "a bony
        organ"); a claimed word the passage uses anywhere, or one close in meaning, is
        not contradicted."""
        claimed = part.names[0]
        head = found.split()[-1].casefold() if found.split() else ""
        said = _words(passage)
        if _singular(head) == _singular(claimed):
            kind = _words(part.text) - _words(claimed) - STOPWORDS
            return "agrees" if kind <= said else "unstated"
        if _singular(claimed) in {_singular(w) for w in said}:
            return "unstated"
        vectors = self.encoder.encode([claimed, head])
        cosine = float(np.dot(vectors[0], vectors[1]))
        return "unstated" if cosine >= self.same_kind_at else "differs"


def _words(text: str) -> set[str]:
    """The words of ``text``, in lower case, without the punctuation around them."""
    return {w.strip(".,;:()").casefold() for w in text.split()} - {""}


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word
