"""A follow-up answer holds only what the documents it cites say.

Each sentence of an answer is held to its sources: the evidence ids it names, else the
ids the whole answer cites. A sentence that names only ids the report does not have is
dropped (the id alone going would leave a claim with nothing under it); so is one whose
closest sentence in its sources is under :data:`MIN_SUPPORT` in cosine. The claim
reader's citations must reach 0.45 (``[agents] min_citation_similarity``, measured by
``bench/citation_threshold.py``), but an answer paraphrases: "The minutes record no such
law." is 0.443 from "The council passed no such law.", while an invented "The mayor
resigned on Friday after the vote." is 0.34 from the closest sentence of the minutes it
cites. 0.40 keeps the first and drops the second; it was chosen on these pairs (the
tests'), not measured on a labelled set. The addresses, handles and phone numbers
that are not the evidence's are gone before (:func:`~zofia_engine.contacts.without_contacts`,
in :func:`~.follow_up.answer_follow_up`), with or without an encoder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ..ports import TextEncoder
from ..report import EvidenceItem
from ..retrieval.ner.sentences import split_sentences

__all__ = ["MIN_SUPPORT", "grounded_answer"]

MIN_SUPPORT = 0.40
_ID = re.compile(r"\b(?:web|wiki|fc)-\d+\b|\bimg-\d+(?:-[a-z]+)*\b")


def grounded_answer(
    text: str,
    cites: Sequence[str],
    evidence: Sequence[EvidenceItem],
    encoder: TextEncoder,
    *,
    min_support: float = MIN_SUPPORT,
) -> str:
    """``text`` with only the sentences its sources support (blocking: it encodes)."""
    by_id = {e.id: e for e in evidence}
    sentences = split_sentences(text)
    if not sentences:
        return ""
    kept: list[str] = []
    for sentence in sentences:
        named = _ID.findall(sentence)
        sources = [i for i in named if i in by_id] if named else [i for i in cites if i in by_id]
        if not sources:
            continue  # it rests only on ids the report does not have, or on nothing
        if _supported(sentence, [by_id[i] for i in sources], encoder) >= min_support:
            kept.append(sentence)
    return " ".join(kept)


def _supported(sentence: str, sources: Sequence[EvidenceItem], encoder: TextEncoder) -> float:
    """The cosine of ``sentence`` to the closest sentence (or title) of its sources."""
    lines = [s for item in sources for s in (item.title, *split_sentences(item.text)) if s]
    if not lines:
        return 0.0
    bare = _ID.sub("", sentence)
    vectors = encoder.encode([bare, *lines])
    return float(np.max(vectors[1:] @ vectors[0]))
