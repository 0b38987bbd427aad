"""A check as schema.org's ClaimReview (or, for a picture post, MediaReview): the shape
fact-checkers publish and search engines read (https://schema.org/ClaimReview).

The rating is the check's vote (:mod:`.votes`: 1 false … 5 true, none for an unproven
post) with the verdict's name as ``alternateName``. A picture post whose verdict says
what was done with the picture is a MediaReview, with the category of schema.org's
MediaManipulationRatingEnumeration that verdict stands for. Who the ``author`` is, and
whether a review is published at all, is the caller's: the report pages publish one only
for a check a named publisher's reviewers reviewed (:mod:`bots.web.page`).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from zofia_engine.report import Report

from .card_notes import SHORT_NAMES
from .votes import vote_of

__all__ = ["MEDIA_CATEGORIES", "TAMPERED", "claim_review", "json_ld"]

#: A picture post's verdict → the MediaReview category it stands for (a false post
#: whose picture looks tampered with is "transformed"; else its picture was put in a
#: context it does not show).
MEDIA_CATEGORIES = {
    "true": "OriginalMediaContent",
    "misleading": "DecontextualizedContent",
    "false": "DecontextualizedContent",
}
#: the vision model's tampering likelihood (0–100) from which a picture counts as changed
TAMPERED = 50
_SCHEMA = "https://schema.org"


def claim_review(
    report: Report,
    *,
    url: str,
    checked_on: dt.date,
    author: str,
    appearance: str = "",
) -> dict[str, Any] | None:
    """``report`` as a ClaimReview (a MediaReview for a picture post whose verdict has a
    category), published at ``url`` on ``checked_on`` by ``author``; ``appearance``: where
    the post was seen, when known. ``None`` for a post with no claim to review (a
    greeting, an opinion, a scam warning)."""
    core = next((c for c in report.claims if c.kind == "core"), None)
    if core is None or report.verdict not in SHORT_NAMES:
        return None
    vote = vote_of(report)
    rating: dict[str, Any] = {
        "@type": "Rating",
        "alternateName": SHORT_NAMES[report.verdict],
        "bestRating": 5,
        "worstRating": 1,
    }
    if vote.truth_score is not None:
        rating["ratingValue"] = vote.truth_score
    item: dict[str, Any] = {"@type": "Claim"}
    if appearance:
        item["appearance"] = [{"@type": "CreativeWork", "url": appearance}]
    review: dict[str, Any] = {
        "@context": _SCHEMA,
        "@type": "ClaimReview",
        "url": url,
        "claimReviewed": core.text,
        "itemReviewed": item,
        "author": {"@type": "Organization", "name": author},
        "datePublished": checked_on.isoformat(),
        "reviewRating": rating,
    }
    category = _media_category(report)
    if category is not None:
        review["@type"] = "MediaReview"
        review["mediaAuthenticityCategory"] = category
        review["itemReviewed"] = {"@type": "MediaReviewItem", "creativeWork": item}
    return review


def _media_category(report: Report) -> str | None:
    if not report.images or report.verdict not in MEDIA_CATEGORIES:
        return None
    tampered = any(i.vision is not None and i.vision.tampering >= TAMPERED for i in report.images)
    if report.verdict == "false" and tampered:
        return "TransformedContent"
    return MEDIA_CATEGORIES[report.verdict]


def json_ld(review: dict[str, Any]) -> str:
    """``review`` as the text of a ``<script type="application/ld+json">``: nothing in it
    can close the element (``<``, ``>`` and ``&`` are written as JSON escapes)."""
    text = json.dumps(review, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
