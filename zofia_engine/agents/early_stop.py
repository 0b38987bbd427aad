"""When the debate may end before its cap: RADAR's dual-threshold controller (§3.3).

After each round the judge's tokens give the stop margin s = p(STOP) − p(CONTINUE)
and the label confidence c = max p(outcome). The debate ends when s ≥ τs and c ≥ τv.
Without token probabilities, or with ``early_stop = "judge"``, the judge's own word
decides, as in ZoFia's Algorithm 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..report import JudgeRuling

__all__ = ["EarlyStop"]


@dataclass(frozen=True)
class EarlyStop:
    """The controller. ``mode``: ``thresholds`` (RADAR), ``judge`` (the judge's word
    alone, Algorithm 1), or ``never`` (every round is held)."""

    mode: Literal["thresholds", "judge", "never"]
    stop_margin: float
    verdict_confidence: float

    def decide(self, ruling: JudgeRuling) -> tuple[bool, Literal["probabilities", "judge"]]:
        """Whether the debate stops after ``ruling``, and what decided it."""
        if self.mode == "never":
            return False, "judge"
        s, c = ruling.stop_margin, ruling.label_confidence
        if self.mode == "thresholds" and s is not None and c is not None:
            return s >= self.stop_margin and c >= self.verdict_confidence, "probabilities"
        return ruling.decision not in (None, "continue"), "judge"

    def apply(
        self, ruling: JudgeRuling
    ) -> tuple[JudgeRuling, bool, Literal["probabilities", "judge"]]:
        """``ruling`` with its decision as the controller decided it, whether to stop, and
        what decided it."""
        stop, by = self.decide(ruling)
        if ruling.status != "ok":
            return ruling, False, by
        decision = ruling.outcome if stop else "continue"
        return ruling.model_copy(update={"decision": decision}), stop, by
