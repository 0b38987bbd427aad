"""A fact-checker's answer to a claim, found among the evidence: which document answers
it, its sentences, and which of them only repeat the claim.

A fact-check archive (the local corpus, ``web:corpus``: a newsroom's or a tipline's own
checks) and a published fact-check (``factcheck``) answer a question about a claim;
an encyclopedia article or a web page does not. The answer to a claim is the archive
document holding the sentence closest to it, when that sentence is close enough
(``answered_at``, cosine): the check of another claim by the same speaker is not the
answer to this one.

A fact-checker restates the claim before answering it (“Rubio said his boots are made in
Wisconsin”, “Clinton said that Congress had not allocated one penny”). Such a sentence
says the claim was made, not that it is so: it is marked (:attr:`Answer.repeats`) and
never carries a verdict. A sentence repeats the claim when it holds most
of the claim's own words (:data:`REPEATS_AT` of them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ...report import EvidenceItem
from ...retrieval.web.corpus import CorpusSearch
from ..evidence_sentences import SentenceIndex

__all__ = ["REPEATS_AT", "Answer", "AnswerRules", "answer_for", "is_answer", "repeats_claim"]

#: the share of the claim's own words a sentence that only repeats it holds
REPEATS_AT = 0.6
_WORD = re.compile(r"[a-z0-9]+")
# fmt: off
_FUNCTION = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "by", "and", "or", "to", "for", "is", "was",
    "were", "are", "be", "been", "its", "it", "as", "with", "from", "that", "which", "who",
    "this", "these", "those", "his", "her", "their", "he", "she", "they", "has", "have",
    "had", "into", "not", "no", "our", "we", "i", "you", "your", "my", "says", "said",
    "say", "will", "would", "than", "more", "most", "there", "here",
})
# fmt: on


def is_answer(item: EvidenceItem | None) -> bool:
    """Whether ``item`` is a fact-checker's answer to a question: a published fact-check,
    or a document of the local archive of checks."""
    return item is not None and (item.source == "factcheck" or item.provider == CorpusSearch.name)


def _words(text: str) -> set[str]:
    plain = text.casefold().replace("’", "'").replace("'", "")
    return {w for w in _WORD.findall(plain) if len(w) > 1 and w not in _FUNCTION}


def repeats_claim(sentence: str, claim: str) -> bool:
    """Whether ``sentence`` holds :data:`REPEATS_AT` of the claim's own words (and so
    restates it rather than answers it)."""
    mine = _words(claim)
    if not mine:
        return False
    return len(mine & _words(sentence)) / len(mine) >= REPEATS_AT


@dataclass(frozen=True)
class Answer:
    """The document that answers a claim (``evidence_id``), its sentences in order, the
    closest one's cosine to the claim, and which sentences only repeat the claim."""

    evidence_id: str
    sentences: tuple[str, ...]
    similarity: float
    repeats: tuple[bool, ...]

    @property
    def text(self) -> str:
        """The whole answer, as the model reads it."""
        return " ".join(self.sentences)

    @property
    def findings(self) -> tuple[str, ...]:
        """The sentences that do more than repeat the claim."""
        return tuple(s for s, r in zip(self.sentences, self.repeats, strict=True) if not r)


@dataclass(frozen=True)
class AnswerRules:
    """When a fact-check document answers a claim (its closest sentence's cosine from
    ``answered_at``), how many of its sentences are read, and the findings question's
    probability of "yes" from which it says the claim is so (``so_at``) and up to
    which it says it is not (``not_so_at``)."""

    answered_at: float = 0.55
    max_sentences: int = 6
    so_at: float = 0.5
    not_so_at: float = 0.28


def answer_for(
    claim: str,
    vector: np.ndarray,
    index: SentenceIndex,
    documents: Mapping[str, EvidenceItem],
    rules: AnswerRules,
) -> Answer | None:
    """The answer to ``claim`` (its unit ``vector``) among the evidence's sentences
    (``index``, with their unit vectors), or ``None`` when no answer's sentence reaches
    ``rules.answered_at``. The answer keeps its ``rules.max_sentences`` closest
    sentences, in order."""
    pool, vectors = index.sentences, index.vectors
    rows = [j for j, s in enumerate(pool) if is_answer(documents.get(s.evidence_id))]
    if not rows:
        return None
    scores = vectors[rows] @ vector
    best = int(np.argmax(scores))
    if float(scores[best]) < rules.answered_at:
        return None
    document = pool[rows[best]].evidence_id
    mine = [
        (j, float(s)) for j, s in zip(rows, scores, strict=True) if pool[j].evidence_id == document
    ]
    kept = sorted(sorted(mine, key=lambda js: -js[1])[: rules.max_sentences])
    sentences = tuple(pool[j].text for j, _ in kept)
    return Answer(
        document,
        sentences,
        round(float(scores[best]), 4),
        tuple(repeats_claim(s, claim) for s in sentences),
    )
