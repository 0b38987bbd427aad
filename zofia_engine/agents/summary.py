"""What the card says under the verdict: the settled core claim's reading, the judge's
reason in whole sentences, or the code's own sentence; and the short report of a post
triage found nothing to check in."""

from __future__ import annotations

import re

from ..records.audio import Transcript
from ..records.images import ImageFinding
from ..records.notes import Note
from ..report import ClaimResult, Confidence, Debate, JudgeRuling, Report, Triage, Usage
from ..retrieval.ner.sentences import split_sentences
from ..text import whole_sentences
from .verdict import FOLLOWS, Ruled

__all__ = ["fallback_summary", "ruling_summary", "triaged_report"]

_TRIAGED = {
    "no_claim": "Nothing to fact-check: the post states no checkable fact.",
    "satire": "This reads as satire, not as a claim of fact.",
    "scam": "This looks like a scam.",
}


# A sentence that says the evidence backs or contradicts something.
_EVIDENCE_SAYS = re.compile(
    r"\b(evidence|sources?|sentences?|passages?|articles?|wikipedia|documents?)\b[^.!?]*"
    r"\b(support|confirm|show|prove|demonstrat|refut|contradict|den(y|ies)|back|verif)",
    re.IGNORECASE,
)


def ruling_summary(
    ruled: Ruled, ruling: JudgeRuling, *, settled: bool, core: ClaimResult | None = None
) -> str:
    """What the card says under the verdict. When the verdict follows the core claim the
    evidence settled (``core``), the reading's own words: what the evidence gives for
    the claim's parts, quoted, never the panel's prose. Otherwise the judge's reason, in
    whole sentences. An unproven post is said so in the code's own words, whatever the
    judge wrote (the card shows the lean and what would settle it). ``settled``:
    whether the evidence settled any of the post's claims; when none, no sentence may
    say the evidence supports or refutes anything."""
    if ruled.verdict == "undetermined":
        return fallback_summary(ruled.verdict, ruling.error)
    if core is not None and ruled.verdict == FOLLOWS.get(core.label or ""):
        return core.reason
    if ruled.verdict == "unproven" and settled:
        return (
            "The evidence found settles some of the post's claims, but none that carries "
            "the panel's ruling."
        )
    if ruled.verdict == "unproven":
        return "The evidence found settles none of the post's claims."
    reason = whole_sentences(ruling.reason)
    if not settled:
        kept = [s for s in split_sentences(reason) if not _EVIDENCE_SAYS.search(s)]
        reason = " ".join(kept)
    return reason or fallback_summary(ruled.verdict, ruling.error)


def fallback_summary(verdict: str, error: str) -> str:
    """A summary when the judge gave no reason."""
    if verdict == "undetermined":
        return f"No verdict could be reached: {error or 'the judge gave no ruling'}."
    return f"The panel's verdict: {verdict}."


def triaged_report(
    found: Triage,
    usage: Usage,
    timings: dict[str, float],
    notes: list[Note],
    *,
    images: list[ImageFinding] | None = None,
    caption: bool = True,
    heard: Transcript | None = None,
) -> Report:
    """The short report of a post triage found nothing to check in (or a scam), with
    what was read in its images (``images``) and heard in its voice note (``heard``;
    ``caption`` false when all its text came from them)."""
    return Report(
        verdict=found.kind,
        confidence=Confidence(basis="triage: no claim was checked"),
        summary=found.reason or _TRIAGED[found.kind],
        debate=Debate(held=False),
        usage=usage,
        timings=timings,
        notes=notes,
        triage=found,
        images=images or [],
        caption=caption,
        heard=heard,
    )
