"""What a reply's token probabilities say about a word the model chose.

A schema-constrained reply names its choice as a word in a JSON object (``"verdict":
"false"``). The token where that word starts carries the model's distribution over
what it could have written there; summed by option, it is the model's probability of
each option.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from .base import TokenLogprob

__all__ = ["option_probabilities"]


def _token_at(logprobs: Sequence[TokenLogprob], pos: int) -> tuple[TokenLogprob, int] | None:
    offset = 0
    for token in logprobs:
        if offset + len(token.token) > pos:
            return token, pos - offset
        offset += len(token.token)
    return None


def option_probabilities(
    text: str, logprobs: Sequence[TokenLogprob] | None, key: str, options: Sequence[str]
) -> dict[str, float] | None:
    """p(option) for each of ``options``, normalised over them, at the token where the
    value of ``key`` starts in the JSON ``text``.

    Alternatives are matched by prefix (``fa`` counts for ``false``, ``mis`` for
    ``misleading``). ``None`` when there are no logprobs, the value cannot be located,
    or no alternative names an option.
    """
    if not logprobs:
        return None
    match = re.search(rf'"{re.escape(key)}"\s*:\s*"', text)
    if match is None:
        return None
    found = _token_at(logprobs, match.end())
    if found is None:
        return None
    token, cut = found
    if not token.top:  # no alternatives: nothing to weigh the choice against
        return None
    lead = token.token[:cut]
    mass = dict.fromkeys(options, 0.0)
    for alt, logprob in {**token.top, token.token: token.logprob}.items():
        if not alt.startswith(lead):
            continue
        fragment = alt[cut:].strip().lower()
        for option in options:
            if fragment and (option.startswith(fragment) or fragment.startswith(option)):
                mass[option] += math.exp(logprob)
                break
    total = sum(mass.values())
    if total <= 0:
        return None
    return {option: round(value / total, 4) for option, value in mass.items()}
