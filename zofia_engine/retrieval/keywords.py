"""Keyword selector: Salience-Calibrated MMR (paper §3.3, eq. 4-5, Algorithm 3).

``select_keywords`` is a pure function of a salience vector and a pairwise
similarity matrix, so it can be checked by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..stage1_settings import KeywordSettings

__all__ = ["Selection", "annealed_lambda", "select_keywords", "similarity_matrix"]

#: the settings' defaults (the paper's γ and λ schedule, no cap)
DEFAULT_RULES = KeywordSettings()


def annealed_lambda(k: int, rules: KeywordSettings = DEFAULT_RULES) -> float:
    """Eq. 5: λ_k = max(λ_min, λ_max − exp(α·k − β)), for ``k`` keywords already chosen."""
    return max(rules.lambda_min, rules.lambda_max - math.exp(rules.alpha * k - rules.beta))


def similarity_matrix(vectors: np.ndarray) -> np.ndarray:
    """Eq. 4b for every pair at once (rows need not be normalised)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    return np.asarray(unit @ unit.T)


@dataclass(frozen=True)
class Selection:
    """One chosen keyword: its index, its MMR score (eq. 4a) and the λ_k it was chosen at."""

    index: int
    mmr: float
    lambda_k: float


def select_keywords(
    salience: Sequence[float],
    similarity: np.ndarray,
    rules: KeywordSettings = DEFAULT_RULES,
) -> list[Selection]:
    """Algorithm 3: greedy SC-MMR with the annealed λ_k and the γ stop.

    The seed is the most salient entity; its score is eq. 4a at k = 0, where
    the redundancy term is empty: λ_0 · S. Each later round picks the
    candidate with the best λ_k · S − (1 − λ_k) · max-similarity-to-chosen and
    stops when that best score is ≤ γ times the score adopted before it.

    Args:
        salience: S_hier per candidate.
        similarity: the candidates' pairwise cosine matrix (computed once).
        rules: γ, the λ schedule (eq. 5), a hard cap (``max_keywords``; 0 means none,
            as in the paper) and what the seed's successor is compared with
            (``initial_reference``). ``"seed"``: the seed's own score (above). ``"one"``:
            the constant 1.0 written in the paper's Algorithm 3 listing; with SBERT
            cosines, whose products rarely exceed 0.5, that stops after the seed almost
            always.

    Returns:
        The chosen candidates in selection order.
    """
    n = len(salience)
    if n == 0:
        return []
    scores = np.asarray(salience, dtype=np.float64)
    sim = np.asarray(similarity, dtype=np.float64)
    seed = int(np.argmax(scores))
    lam0 = annealed_lambda(0, rules)
    chosen = [Selection(seed, float(lam0 * scores[seed]), lam0)]
    previous = chosen[0].mmr if rules.initial_reference == "seed" else 1.0
    candidates = [i for i in range(n) if i != seed]
    # Running max similarity of each candidate to the chosen set: one look-up per round.
    max_sim = sim[seed].copy()

    cap = rules.max_keywords
    while candidates and (cap == 0 or len(chosen) < cap):
        lam = annealed_lambda(len(chosen), rules)
        best_index, best_score = -1, -math.inf
        for i in candidates:
            score = lam * scores[i] - (1 - lam) * max_sim[i]
            if score > best_score:
                best_index, best_score = i, score
        if best_score <= rules.gamma * previous:
            break
        previous = best_score
        chosen.append(Selection(best_index, float(best_score), lam))
        candidates.remove(best_index)
        max_sim = np.maximum(max_sim, sim[best_index])
    return chosen
