"""Context-aware Wikipedia disambiguation (paper §3.4, eq. 7).

For a keyword with candidate senses o_1..o_M, each candidate's description is
substituted for the keyword in its local context; the sense whose modified
context stays closest to the original context (cosine of SBERT vectors) wins.
All candidates of all keywords are encoded in one batch.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..ports import TextEncoder
from ..records.stage1 import WikiCandidate

__all__ = [
    "SenseChoice",
    "choose_senses",
    "first_sentences",
    "modified_contexts",
    "pick_senses",
    "sense_text",
    "substitute",
]


@dataclass(frozen=True)
class SenseChoice:
    """The chosen candidate and every candidate's eq. 7 score, in candidate order."""

    candidate: WikiCandidate
    score: float
    scores: list[float]


def sense_text(candidate: WikiCandidate, split: Callable[[str], list[str]]) -> str:
    """The description of a sense: its short description, else its first sentence."""
    if candidate.description.strip():
        return candidate.description.strip()
    sentences = split(candidate.extract)
    return sentences[0] if sentences else candidate.title


def substitute(context: str, names: Sequence[str], replacement: str) -> str:
    """C(U ← o): ``context`` with every occurrence of any of ``names`` replaced."""
    alternatives = sorted({n for n in names if n.strip()}, key=len, reverse=True)
    if not alternatives:
        return context
    pattern = re.compile("|".join(re.escape(n) for n in alternatives), re.IGNORECASE)
    replaced = pattern.sub(lambda _: replacement, context)
    # A keyword absent from its context (rare: a merged variant): append the sense.
    return replaced if replaced != context else f"{context} {replacement}"


def first_sentences(text: str, n: int, split: Callable[[str], list[str]]) -> str:
    """The first ``n`` sentences of ``text`` (the paper keeps 3)."""
    return " ".join(split(text)[:n])


def choose_senses(
    requests: Sequence[tuple[str, Sequence[str], np.ndarray, Sequence[WikiCandidate]]],
    encoder: TextEncoder,
    split: Callable[[str], list[str]],
) -> list[SenseChoice | None]:
    """Eq. 7 for several keywords at once.

    Args:
        requests: per keyword, ``(context, names, context_vector, candidates)``:
            its local context, the surface forms to replace, the context's
            (normalised) vector, and its candidate senses.
        encoder: the shared SBERT encoder.
        split: a sentence splitter.

    Returns:
        Per keyword, the chosen sense, or ``None`` when it had no candidates.
    """
    modified = modified_contexts(requests, split)
    vectors = encoder.encode(modified) if modified else np.zeros((0, 0), np.float32)
    return pick_senses(requests, vectors)


def modified_contexts(
    requests: Sequence[tuple[str, Sequence[str], np.ndarray, Sequence[WikiCandidate]]],
    split: Callable[[str], list[str]],
) -> list[str]:
    """Every C(U ← o) of eq. 7, keyword by keyword, candidate by candidate: the
    strings to encode (callers may encode them in one batch with others)."""
    modified: list[str] = []
    for context, names, _, candidates in requests:
        modified.extend(substitute(context, names, sense_text(c, split)) for c in candidates)
    return modified


def pick_senses(
    requests: Sequence[tuple[str, Sequence[str], np.ndarray, Sequence[WikiCandidate]]],
    vectors: np.ndarray,
) -> list[SenseChoice | None]:
    """Eq. 7's choice, given the vectors of :func:`modified_contexts` in its order."""
    choices: list[SenseChoice | None] = []
    row = 0
    for _, _, v_context, candidates in requests:
        if not candidates:
            choices.append(None)
            continue
        block = vectors[row : row + len(candidates)]
        row += len(candidates)
        scores = [float(s) for s in block @ v_context]
        best = int(np.argmax(scores))
        choices.append(SenseChoice(candidates[best], scores[best], scores))
    return choices
