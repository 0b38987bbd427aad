"""Salience scorer (paper §3.2, eq. 3): hierarchical salience of each entity.

S_hier(U) = cos(v_U, v_C) * cos(v_C, v_T), where C is the entity's local
context (previous + own + next sentence) and T the whole post. Everything is
encoded in one batch per post, each distinct string once.

An entity mentioned in several sentences takes the best of its mentions (or
only its first, with ``mentions="first"``). The post's vector is SBERT's
vector of the post, which like any SBERT input is cut at the model's window
(256 word pieces for all-MiniLM-L6-v2): the lead of a news story.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..ports import TextEncoder
from ..records.stage1 import Entity

__all__ = [
    "PostView",
    "SalienceResult",
    "hierarchical_salience",
    "local_context",
    "score_salience",
]


@dataclass(frozen=True)
class PostView:
    """The post as salience and the Wikipedia title pass need it: its text and its
    vector (encoded once, while NER runs)."""

    text: str
    vector: np.ndarray


def hierarchical_salience(
    v_entity: np.ndarray, v_context: np.ndarray, v_text: np.ndarray
) -> tuple[float, float, float]:
    """Eq. 3 on raw vectors: ``(local, global, local * global)``."""

    def cos(a: np.ndarray, b: np.ndarray) -> float:
        denom = float(np.linalg.norm(a) * np.linalg.norm(b))
        return float(np.dot(a, b) / denom) if denom else 0.0

    local = cos(v_entity, v_context)
    global_ = cos(v_context, v_text)
    return local, global_, local * global_


def local_context(sentences: Sequence[str], j: int) -> str:
    """The paper's C(U) = s_{j-1} ⊕ s_j ⊕ s_{j+1}."""
    return " ".join(sentences[max(0, j - 1) : j + 2])


@dataclass
class SalienceResult:
    """Scored entities plus the vectors later steps reuse (SC-MMR, eq. 7)."""

    entities: list[Entity]
    entity_vectors: np.ndarray
    contexts: list[str]
    context_vectors: np.ndarray


def score_salience(
    entities: Sequence[Entity],
    sentences: Sequence[str],
    post: PostView,
    encoder: TextEncoder,
    mentions: Literal["all", "first"] = "all",
) -> SalienceResult:
    """Score every entity by eq. 3 with one encoder call (the post's own vector is
    ``post``'s).

    Returns entities (copies with ``salience``, ``local_salience``,
    ``global_salience`` and ``context_sentence`` set) in the input order.
    """
    if not entities:
        return SalienceResult([], np.zeros((0, 0), np.float32), [], np.zeros((0, 0), np.float32))
    per_entity: list[list[int]] = []
    for entity in entities:
        js = sorted({m.sentence for m in entity.mentions})
        per_entity.append(js[:1] if mentions == "first" else js)
    context_of = {j: local_context(sentences, j) for js in per_entity for j in js}
    names = [e.text for e in entities]
    # A short post can be its own context: encode each distinct string once.
    contexts = list(dict.fromkeys(c for c in context_of.values() if c != post.text))
    vectors = encoder.encode([*names, *contexts])
    v_names = vectors[: len(names)]
    v_text = post.vector
    v_string = dict(zip(contexts, vectors[len(names) :], strict=True))
    v_string[post.text] = v_text
    v_ctx = {j: v_string[c] for j, c in context_of.items()}

    scored: list[Entity] = []
    best_contexts: list[str] = []
    best_vectors: list[np.ndarray] = []
    for entity, v_name, js in zip(entities, v_names, per_entity, strict=True):
        best = max(
            ((j, *hierarchical_salience(v_name, v_ctx[j], v_text)) for j in js),
            key=lambda row: row[3],
        )
        j, local, global_, hier = best
        scored.append(
            entity.model_copy(
                update={
                    "salience": round(hier, 6),
                    "local_salience": round(local, 6),
                    "global_salience": round(global_, 6),
                    "context_sentence": j,
                }
            )
        )
        best_contexts.append(context_of[j])
        best_vectors.append(v_ctx[j])
    return SalienceResult(scored, v_names, best_contexts, np.vstack(best_vectors))
