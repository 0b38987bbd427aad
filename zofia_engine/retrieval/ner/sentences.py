"""Rule-based sentence splitting (spaCy's sentencizer), shared by the NER backends."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

__all__ = ["sentence_spans", "split_sentences"]


@lru_cache(maxsize=1)
def _splitter() -> Language:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def spans_of(doc: Doc) -> list[tuple[int, int]]:
    """Character spans of ``doc``'s sentences, whitespace-only sentences left out."""
    spans = []
    text = doc.text
    for sent in doc.sents:
        start, end = sent.start_char, sent.end_char
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            spans.append((start, end))
    return spans


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Split ``text`` into sentence character spans."""
    return spans_of(_splitter()(text))


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentence strings."""
    return [text[s:e].strip() for s, e in sentence_spans(text)]
