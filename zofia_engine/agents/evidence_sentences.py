"""The evidence as numbered sentences: what every source can settle, split and encoded
once per check, and the shortlist the panel is shown.

Every source counts (web pages, Wikipedia articles, the local corpus, the text of
published fact-checks); the post's own images never do. The shortlist keeps each
claim's (and the post's) most similar sentences (cosine at least θ_sim, eq. 9), in
evidence order; the panel reads it as one message, so a backend with a prefix cache
evaluates it once for every agent that follows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..ports import TextEncoder
from ..report import EvidenceItem
from ..text import clip

__all__ = ["READ_SOURCES", "Sentence", "SentenceIndex", "SentenceList"]

#: The sources whose text can settle a claim (never the post's own images).
READ_SOURCES = ("factcheck", "wikipedia", "web")
MAX_SENTENCE_CHARS = 320


@dataclass(frozen=True)
class Sentence:
    """One sentence of one document (``evidence_id``)."""

    evidence_id: str
    text: str


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms: np.ndarray = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return np.asarray(vectors / norms)


@dataclass(frozen=True)
class SentenceList:
    """The evidence sentences one check shows its panel, numbered from 1 in evidence
    order, and their unit vectors."""

    sentences: list[Sentence]
    vectors: np.ndarray

    @classmethod
    def empty(cls) -> SentenceList:
        return cls([], np.zeros((0, 1), dtype=np.float32))

    def closest(
        self, claims: Sequence[str], encoder: TextEncoder, *, top_k: int, theta: float
    ) -> tuple[np.ndarray, list[list[int]]]:
        """Each claim's cosine to every sentence (rows: claims), and for each claim the
        numbers of its top-k sentences with cosine at least ``theta``, closest first
        (eq. 9; blocking)."""
        if not self.sentences or not claims:
            return np.zeros((len(claims), len(self.sentences)), np.float32), [[] for _ in claims]
        sims = _unit(encoder.encode(list(claims))) @ self.vectors.T
        own = []
        for row in sims:
            order = np.argsort(-row, kind="stable")[:top_k]
            own.append([int(j) + 1 for j in order if row[j] >= theta])
        return np.asarray(sims), own


@dataclass(frozen=True)
class SentenceIndex:
    """Every sentence of one check's evidence that can settle a claim, encoded once."""

    sentences: list[Sentence]
    vectors: np.ndarray

    @classmethod
    def build(
        cls,
        items: Sequence[EvidenceItem],
        splitter: Callable[[str], list[str]],
        encoder: TextEncoder,
    ) -> SentenceIndex:
        """The sentences of the evidence items of :data:`READ_SOURCES` (blocking)."""
        sentences = [
            Sentence(item.id, clip(text, MAX_SENTENCE_CHARS))
            for item in items
            if item.source in READ_SOURCES
            for text in splitter(item.text)
            if len(text.split()) >= 3
        ]
        if not sentences:
            return cls([], np.zeros((0, 1), dtype=np.float32))
        return cls(sentences, _unit(encoder.encode([s.text for s in sentences])))

    def shortlist(
        self, queries: Sequence[str], encoder: TextEncoder, *, top_k: int, theta: float
    ) -> SentenceList:
        """The sentences shown to the panel: each query's top-k with cosine at least
        ``theta`` (the claims', and the post's), each once, in evidence order
        (blocking)."""
        if not self.sentences or not queries:
            return SentenceList.empty()
        sims = _unit(encoder.encode(list(queries))) @ self.vectors.T
        kept: set[int] = set()
        for row in sims:
            order = np.argsort(-row, kind="stable")[:top_k]
            kept.update(int(j) for j in order if row[j] >= theta)
        chosen = sorted(kept)
        return SentenceList([self.sentences[j] for j in chosen], self.vectors[chosen])
