"""Which findings on a post's image may carry a verdict, written once (the provider that
marks a label read from the image alone, ``LABEL_LEAD``, is beside the record it marks:
:attr:`~zofia_engine.report.EvidenceItem.label_lead`).

Words printed on an image are part of the post: anyone can stamp "FACT CHECK: TRUE ✅"
on a screenshot. So a label read from an image never grounds ``true``; it may point to
``false``, ``misleading`` or ``satire`` only as a *lead* the panel is shown, not as a
basis for the verdict, unless reverse image search found the same image (a full
match) on a fact-checker's site: then the fact-checker published it, and the label is
theirs. A vision model's miscaption or tampering score can be a basis for ``misleading``
at most (:data:`VISION_AT_MOST`): a model looking at a picture can tell that it does not
show what the post says, or that it was likely edited, which makes the post misleading;
it cannot tell that the post's claims are false, so alone it never grounds ``false``
(nor ``true``).

The evidence items say which is which by their ``provider``:
:data:`LABEL_LEAD` (the words alone), :data:`LABEL_CONFIRMED` (found on a fact-checker's
site) and :data:`VISION`.
"""

from __future__ import annotations

from ..report import LABEL_LEAD, EvidenceItem

__all__ = [
    "LABEL_CONFIRMED",
    "LABEL_LEAD",
    "LEAD_OUTCOMES",
    "VISION",
    "VISION_AT_MOST",
    "image_basis",
]

#: The provider of a label item whose image reverse search found on a fact-checker's site.
LABEL_CONFIRMED = "fact-checker, by reverse image search"
#: The provider of a vision model's finding.
VISION = "vision"
#: The strongest outcome a vision model's finding may point to and ground.
VISION_AT_MOST = "misleading"
#: The outcomes a printed label may point to, as a lead; never ``true``.
LEAD_OUTCOMES = frozenset({"false", "misleading", "satire"})


def image_basis(item: EvidenceItem) -> str:
    """The outcome ``item`` can be a basis for as a finding on the post's image, or
    ``""``: a label confirmed on a fact-checker's site, for what it says; a vision
    model's finding, for :data:`VISION_AT_MOST` whatever it points to (a report stored
    when it could point to ``false`` included); never a label read from the image alone,
    and never ``true``."""
    if item.source != "image" or item.rating not in LEAD_OUTCOMES:
        return ""
    if item.provider == VISION:
        return VISION_AT_MOST
    return item.rating if item.provider == LABEL_CONFIRMED else ""
