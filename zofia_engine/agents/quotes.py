"""Quotes that must be found: word for word in a text, and every phrase an agent puts in
quotation marks in the post or the evidence.

Small models quote words the post does not contain ("superlatives like 'newest'"). A
phrase in quotation marks that occurs in none of the sources is dropped with the
sentence that carries it, and counted, as a claim's dropped citations are.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from ..report import Analyses
from ..retrieval.ner.sentences import split_sentences
from ..text import without_format

__all__ = ["Haystack", "find_quote", "grounded_analyses", "normal", "unfounded"]

_QUOTE_CHARS = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-"})
# A phrase between double quotes, or between single quotes that are not apostrophes
# (the opening one follows a space, a bracket or the start; the closing one is
# followed by a space, punctuation or the end).
_QUOTED = re.compile(
    r"\"([^\"\n]{1,200})\"|(?:(?<=^)|(?<=[\s(\[:]))'([^'\n]{1,200}?)'(?=$|[\s.,;:!?)\]])"
)


def normal(text: str) -> str:
    """``text`` folded for matching: NFKC, format characters out (the word joiner
    :func:`~zofia_engine.llm.special_tokens.defuse` puts in "[VIDEO]" included),
    typographic quotes and dashes made plain, casefolded, white space collapsed."""
    text = without_format(unicodedata.normalize("NFKC", text))
    text = text.translate(_QUOTE_CHARS).casefold()
    return " ".join(text.split())


def find_quote(quote: str, texts: Sequence[tuple[str, str]]) -> str | None:
    """The id of the first ``(id, text)`` that contains ``quote`` verbatim (up to case,
    spacing and typographic quotes; "…" may join excerpts of one text), or ``None``."""
    parts = [normal(p).strip(" \"'.,;:") for p in re.split(r"\.\.\.|…", quote)]
    parts = [p for p in parts if p]
    if not parts:
        return None
    for source, text in texts:
        hay = normal(text)
        if all(p in hay for p in parts):
            return source
    return None


class Haystack:
    """The texts quoted phrases must come from (the post, the evidence), folded once."""

    def __init__(self, texts: Iterable[str]) -> None:
        self._text = "\n".join(normal(t) for t in texts)

    def has(self, phrase: str) -> bool:
        folded = normal(phrase).strip(" \"'.,;:!?")
        return not folded or folded in self._text


def unfounded(text: str, sources: Haystack) -> tuple[str, int]:
    """``text`` without the sentences that quote a phrase found in none of ``sources``,
    and how many quoted phrases were not found."""
    if not text or ('"' not in text and "'" not in text and "“" not in text and "‘" not in text):
        return text, 0
    kept, dropped = [], 0
    for sentence in split_sentences(text):
        plain = sentence.translate(_QUOTE_CHARS)
        missing = [m for m in _QUOTED.finditer(plain) if not sources.has(m.group(1) or m.group(2))]
        if missing:
            dropped += len(missing)
        else:
            kept.append(sentence)
    return " ".join(kept), dropped


def grounded_analyses(analyses: Analyses, sources: Haystack) -> tuple[Analyses, int]:
    """``analyses`` without the sentences that quote a phrase found in none of
    ``sources``, and how many such phrases there were."""
    dropped = 0
    linguist = []
    for finding in analyses.linguist:
        text, n = unfounded(finding.analysis, sources)
        dropped += n
        linguist.append(finding.model_copy(update={"analysis": text}))
    expert = analyses.expert
    if expert is not None:
        knowledge, n1 = unfounded(expert.knowledge_concordance, sources)
        logic, n2 = unfounded(expert.logical_integrity, sources)
        dropped += n1 + n2
        update = {"knowledge_concordance": knowledge, "logical_integrity": logic}
        expert = expert.model_copy(update=update)
    return analyses.model_copy(update={"linguist": linguist, "expert": expert}), dropped
