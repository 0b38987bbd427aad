"""How sure a verdict that follows the evidence is: how often a claim read that way was
right, measured on the project's own labelled claims.

A verdict that follows the core claim's part-by-part reading (a place, a person or a
date the evidence gives differently, or every part the same) is as sure as that reading.
The reading's own signal is the model's probability that the passage says the claim with
the passage's words in it (``ClaimResult.restated``). ``bench/settle.py --calibrate``
bins that probability on the labelled claims (a fit half of them), per label, and
writes the share of right readings per bin to ``zofia_engine/data/reading_calibration.json``;
the other half measures the calibration error (``docs/verdicts.md``). A core claim the
stance reader read as a whole (no checkable parts, or a post not in English) has no such
probability: its label has one bin of its own, ``stance:<label>``.

A core claim read against a fact-checker's answer (:mod:`.answers`) is as sure as the
findings question's probability of the side it settled on (``answer:<label>``), binned
on LIAR-PLUS's dev claims by ``bench/liar_settle.py --calibrate`` in a table of its own,
``zofia_engine/data/answer_calibration.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..report import ClaimResult, Confidence

__all__ = [
    "ANSWER_CALIBRATION_FILE",
    "CALIBRATION_FILE",
    "Calibration",
    "calibration",
    "reading_confidence",
    "table_key",
]

CALIBRATION_FILE = "data/reading_calibration.json"
ANSWER_CALIBRATION_FILE = "data/answer_calibration.json"


@dataclass(frozen=True)
class Calibration:
    """Per reading label, bins of the ``restated`` probability: (low, high, share of
    right readings, readings in the bin), and how many labelled claims it was fitted on."""

    bins: dict[str, list[tuple[float, float, float, int]]]
    claims: int

    def lookup(self, label: str, probability: float) -> float | None:
        """The share of right readings for ``label`` at ``probability``, or ``None``."""
        rows = self.bins.get(label) or []
        for low, high, share, _ in rows:
            if low <= probability <= high:
                return share
        return None


@lru_cache(maxsize=2)
def calibration(name: str = CALIBRATION_FILE) -> Calibration:
    """A packaged calibration table (the reading's, or the answer reading's)."""
    text = resources.files("zofia_engine").joinpath(name).read_text("utf-8")
    data = json.loads(text)
    bins = {k: [tuple(row) for row in v] for k, v in data["bins"].items()}
    return Calibration(bins, int(data["claims"]))


_WORD = {"refutes": "contradicted", "supports": "confirmed"}


def table_key(core: ClaimResult) -> tuple[str, float] | None:
    """The calibration row ``core``'s reading falls in: its label (prefixed ``stance:``
    when read as a whole) and the probability to look up, or ``None`` when unread."""
    if core.label not in _WORD:
        return None
    if core.read_by == "answer" and core.answer is not None and core.answer.said is not None:
        said = core.answer.said
        return f"answer:{core.label}", said if core.label == "supports" else 1.0 - said
    if core.read_by == "parts" and core.restated is not None:
        return core.label, core.restated
    if core.read_by == "stance":
        return f"stance:{core.label}", 1.0
    return None


def reading_confidence(core: ClaimResult) -> Confidence | None:
    """The confidence of a verdict that follows ``core``'s reading, or ``None`` when it
    was not read or the table has no bin for it."""
    key = table_key(core)
    if key is None or core.label is None:
        return None
    answered = key[0].startswith("answer:")
    table = calibration(ANSWER_CALIBRATION_FILE if answered else CALIBRATION_FILE)
    share = table.lookup(*key)
    if share is None or table.claims == 0:  # no bin, or a table not fitted yet
        return None
    basis = (
        f"how often a claim {_WORD[core.label]} this way by the evidence was right, "
        f"on {table.claims} labelled claims"
    )
    return Confidence(value=round(share, 2), basis=basis, source="reading")
