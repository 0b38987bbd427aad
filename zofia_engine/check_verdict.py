"""The verdict a check reports and the words under it: the judge's ruling within what
the evidence allows (:func:`~zofia_engine.agents.verdict.verdict_of`), and the card's
summary, quoting only what the post or the evidence says."""

from __future__ import annotations

from dataclasses import dataclass

from .agents.judge import Judged, calibrated
from .agents.quotes import unfounded
from .agents.summary import fallback_summary, ruling_summary
from .agents.verdict import Ruled, settled_core, verdict_of
from .check_evidence import Gathered
from .records import notes
from .records.notes import Note, note
from .report import Confidence, EvidenceItem

__all__ = ["Verdicted", "verdicted"]


@dataclass(frozen=True)
class Verdicted:
    """The verdict, how sure it is, the card's summary, what it noted on the way, and
    how many quotes the summary lost as unfounded."""

    ruled: Ruled
    confidence: Confidence
    summary: str
    notes: list[Note]
    dropped_quotes: int


def verdicted(
    judged: Judged,
    prior: dict[str, float] | None,
    gathered: Gathered,
    evidence: list[EvidenceItem],
    *,
    require_evidence: bool,
) -> Verdicted:
    """The verdict of ``judged`` (its probabilities corrected by ``prior``, the judge's
    on a content-free post, when there is one) over what was ``gathered``."""
    outcomes = judged.outcomes
    if outcomes is not None and prior is not None:
        outcomes = calibrated(outcomes, prior)
    ruled, confidence = verdict_of(
        judged.ruling,
        outcomes,
        gathered.claims,
        evidence,
        require_evidence=require_evidence,
        no_logprobs=judged.completion is not None and not judged.completion.logprobs,
        grounded=gathered.grounded,
    )
    said: list[Note] = []
    if ruled.verdict == "undetermined":
        said.append(notes.no_verdict(judged.ruling.error))
    elif judged.ruling.status == "failed":  # the verdict the evidence fixed stands alone
        said.append(note(f"the judge failed ({judged.ruling.error})", "step_failed"))
    core = settled_core(gathered.claims, gathered.grounded)
    summary = ruling_summary(ruled, judged.ruling, settled=bool(gathered.grounded), core=core)
    summary, dropped = unfounded(summary, gathered.sources)
    summary = summary or fallback_summary(ruled.verdict, judged.ruling.error)
    return Verdicted(ruled, confidence, summary, said, dropped)
