"""A check as schema.org's ClaimReview or MediaReview (:mod:`bots.render.claim_review`),
held to the test's own schema check of what schema.org and Google's fact-check markup
require; and the report page carries it only for a check the service's reviewers
reviewed, when the site names its publisher."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.factories import full_report, stored_check
from tests.peers.fixtures.service_steps import review
from tests.peers.fixtures.store_fixtures import Clock

from bots.render.claim_review import claim_review, json_ld
from bots.service.shown import report_of
from bots.web.page import report_page
from bots.web.render import report_html
from storage import CheckStore
from storage.database import open_database
from zofia_engine.records.images import ImageFinding, VisionFinding
from zofia_engine.report import TRIAGED, Report

DAY = dt.date(2026, 3, 2)
URL = "https://factcheck.example.org/c/abc123"
MEDIA_CATEGORIES = {
    "OriginalMediaContent",
    "DecontextualizedContent",
    "EditedOrCroppedContent",
    "TransformedContent",
    "SatireOrParodyContent",
    "StagedContent",
}


def valid(review: dict[str, Any]) -> None:
    """The test's own schema check: what a ClaimReview (MediaReview) must hold."""
    assert review["@context"] == "https://schema.org"
    assert review["@type"] in ("ClaimReview", "MediaReview")
    assert review["url"].startswith("https://") and review["claimReviewed"].strip()
    assert dt.date.fromisoformat(review["datePublished"])
    assert review["author"]["@type"] == "Organization" and review["author"]["name"].strip()
    rating = review["reviewRating"]
    assert rating["@type"] == "Rating" and rating["alternateName"].strip()
    assert (rating["worstRating"], rating["bestRating"]) == (1, 5)
    if "ratingValue" in rating:
        assert isinstance(rating["ratingValue"], int) and 1 <= rating["ratingValue"] <= 5
    item = review["itemReviewed"]
    if review["@type"] == "MediaReview":
        assert review["mediaAuthenticityCategory"] in MEDIA_CATEGORIES
        assert item["@type"] == "MediaReviewItem"
        item = item["creativeWork"]
    assert item["@type"] == "Claim"
    for seen in item.get("appearance", []):
        assert seen["@type"] == "CreativeWork" and seen["url"].startswith("http")


@pytest.mark.parametrize(
    ("verdict", "value", "name"),
    [("false", 1, "False"), ("true", 5, "True"), ("misleading", 3, "Misleading")],
)
def test_a_verdict_is_rated_by_the_vote_table(verdict: str, value: int, name: str) -> None:
    text_only = full_report(verdict).model_copy(update={"images": []})
    found = claim_review(
        text_only, url=URL, checked_on=DAY, author="Example Checks",
        appearance="https://t.me/c/1/5",
    )  # fmt: skip
    assert found is not None
    valid(found)
    assert found["reviewRating"]["ratingValue"] == value
    assert found["reviewRating"]["alternateName"] == name
    assert found["claimReviewed"] == "Springfield banned bicycles from every street in March."
    assert found["itemReviewed"]["appearance"] == [
        {"@type": "CreativeWork", "url": "https://t.me/c/1/5"}
    ]


def test_an_unproven_post_has_no_rating_value_and_a_post_without_a_claim_no_review() -> None:
    unproven = claim_review(full_report("unproven"), url=URL, checked_on=DAY, author="E")
    assert unproven is not None and "ratingValue" not in unproven["reviewRating"]
    valid(unproven)
    for kind in TRIAGED:
        triaged = Report(verdict=kind)
        assert claim_review(triaged, url=URL, checked_on=DAY, author="E") is None


def _picture(report: Report, tampering: int) -> Report:
    vision = VisionFinding(
        description="A crowd", miscaption_rate=80, band="misleading",
        miscaption_reason="Another year.", tampering=tampering, tampering_reason="",
    )  # fmt: skip
    image = ImageFinding(
        index=0, bytes=10, width=2, height=2, media_type="image/png", vision=vision
    )
    return report.model_copy(update={"images": [image]})


@pytest.mark.parametrize(
    ("verdict", "tampering", "category"),
    [
        ("false", 10, "DecontextualizedContent"),
        ("false", 90, "TransformedContent"),
        ("true", 90, "OriginalMediaContent"),
        ("misleading", 10, "DecontextualizedContent"),
    ],
)
def test_a_picture_post_is_a_media_review(verdict: str, tampering: int, category: str) -> None:
    found = claim_review(
        _picture(full_report(verdict), tampering), url=URL, checked_on=DAY, author="E"
    )
    assert found is not None and found["@type"] == "MediaReview"
    assert found["mediaAuthenticityCategory"] == category
    valid(found)


def test_nothing_in_the_review_can_close_its_script_element() -> None:
    report = full_report("false")
    core = report.claims[0].model_copy(update={"text": "A </script><b>bold</b> & claim"})
    found = claim_review(
        report.model_copy(update={"claims": [core]}), url=URL, checked_on=DAY, author="E"
    )
    assert found is not None
    text = json_ld(found)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["claimReviewed"] == "A </script><b>bold</b> & claim"


def _json_ld(html: str) -> dict[str, Any] | None:
    found = re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)
    return None if found is None else json.loads(found.group(1))


def test_the_report_page_carries_it_only_for_a_publishers_review(tmp_path: Path) -> None:
    db = open_database(tmp_path / "zofia.db")
    store = CheckStore(db, clock=Clock())
    text_only = full_report("false").model_copy(update={"images": []})
    row = stored_check(store, text_only, url="https://t.me/c/1/5")

    def page(publisher: str) -> str:
        found = report_of(store, row.id)
        assert found is not None
        return report_html(report_page(*found, publisher=publisher, url=URL))

    assert _json_ld(page("Example Checks")) is None  # the machine's verdict alone
    review(store, row.id, verdict="false", chat="chat-hash-3f9a")  # a chat's moderators
    assert _json_ld(page("Example Checks")) is None
    review(store, row.id, verdict="false", reviewer="r2")  # the service's reviewers
    assert _json_ld(page("")) is None  # no publisher named
    published = _json_ld(page("Example Checks"))
    assert published is not None
    valid(published)
    assert published["author"]["name"] == "Example Checks" and published["url"] == URL
    db.close()
