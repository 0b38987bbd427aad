"""The second reading of a claim: does the evidence about its subject hold each of its
values at all? Read by code, with no model.

The part comparison (:mod:`.reader`) trusts the model to fill each blank with the value
the passage ties to the claim's relation. When a passage gives several values of one
kind (two spans, two offices, a birth and a death year), a small model takes the wrong
one often enough to call a true claim false. This reading does not share that failure:
for each checkable part it looks at *every* value of the part's kind in the sentences
about the subject (each compared as :mod:`.reader` compares a found value), and at the
words themselves:

* **present**: some value of the sentences is the claimed one ("1979 to 1990" is there,
  whatever the model chose);
* **absent**: none is, nor are the claimed words, and the sentences do give values of
  that kind (so they speak of it and say something else);
* **unknown**: neither: they say nothing of that kind, or only what cannot be compared.

A claim settles only when the two readings agree (:func:`agrees`): every part the
comparison confirmed is present, and every part it found different is absent. A true
claim whose value the model mismatched is present, and stays unsettled instead of
false; a false claim whose changed value the sentences hold elsewhere stays unsettled
too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from ...records.reading import PartCheck
from .claim import ClaimParts, Part
from .names import name_key
from .passage import Source, options_for
from .values import Comparison

__all__ = ["Held", "Presence", "agrees", "presence"]

Presence = Literal["present", "absent", "unknown"]


@dataclass(frozen=True)
class Held:
    """Whether the sentences hold a part's value (``status``), and where: the words
    that say it and their evidence id (empty unless present)."""

    status: Presence
    value: str = ""
    evidence_id: str = ""


def presence(
    claim: ClaimParts,
    part: Part,
    sources: Sequence[Source],
    compare: Callable[[Part, str, str], Comparison],
) -> Held:
    """Whether the sentences ``sources`` (about the claim's subject) hold ``part``'s
    value: any of their values of its kind compared by ``compare`` (the part, the value
    and the sentence it is in), and its words."""
    differs = False
    for source in sources:
        for found in options_for(part, source.parsed, claim):
            outcome = compare(part, found, source.text)
            if outcome == "agrees":
                return Held("present", found, source.evidence_id)
            differs |= outcome == "differs"
    said = name_key(part.text)
    for source in sources:
        if said and f" {said} " in f" {name_key(source.text)} ":
            return Held("present", part.text, source.evidence_id)
    return Held("absent" if differs else "unknown")


def agrees(label: str, checks: Sequence[PartCheck], found: dict[str, Held]) -> bool:
    """Whether the second reading (``found``: each part's presence, by its claimed words)
    agrees with the part comparison's ``label``: for "supports", every checked part
    present; for "refutes", every part found different absent."""
    if label == "supports":
        return all(_status(found, c) == "present" for c in checks if c.outcome != "unstated")
    deciding = [c for c in checks if c.outcome == "differs"]
    return bool(deciding) and all(_status(found, c) == "absent" for c in deciding)


def _status(found: dict[str, Held], check: PartCheck) -> Presence:
    held = found.get(check.claimed)
    return held.status if held else "unknown"
