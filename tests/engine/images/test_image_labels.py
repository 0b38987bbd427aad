"""Words printed on an image are the post's own words: a stamp ("FACT CHECK: MOSTLY
TRUE ✅") never grounds ``true``, and "FALSE" is a lead for the panel, not a basis,
unless reverse image search found the stamped image on a fact-checker's site. The
rule (``zofia_engine.images.grounds``), the items built from an image's findings, the
verdict rule, and the card's wording. The whole check is in
``tests/engine/images/test_images.py``."""

from __future__ import annotations

from typing import Any, cast

import pytest

from bots.render.card import report_card
from bots.render.sections import evidence_weight
from zofia_engine.agents.summary import triaged_report
from zofia_engine.agents.verdict import can_settle, rule_on_evidence
from zofia_engine.images.analysis import examine_images, vision_outcome
from zofia_engine.images.grounds import (
    LABEL_CONFIRMED,
    LABEL_LEAD,
    VISION,
    image_basis,
)
from zofia_engine.images.labels import find_labels
from zofia_engine.images.reverse import ReverseImageBackend
from zofia_engine.post import Post, PostImage, ReadPost
from zofia_engine.records.images import ImageFinding, ImageSighting, VisionFinding
from zofia_engine.report import EvidenceItem, Triage, Usage
from zofia_engine.retrieval.credibility import Credibility, SourceQuality

CHECKER_PAGE = "https://www.politifact.com/factchecks/2025/mar/04/springfield-bicycles/"
NEWS_PAGE = "https://news.example.com/2025/springfield"


def _image(item_id: str, provider: str, rating: str) -> EvidenceItem:
    return EvidenceItem(
        id=item_id, source="image", provider=provider, title="t", url="", text="x", rating=rating
    )


LEAD = _image("img-1-label", LABEL_LEAD, "false")
CONFIRMED = _image("img-1-label", LABEL_CONFIRMED, "false")


# ------------------------------------------------------------------ the verdict rule


def test_a_label_read_from_the_image_alone_is_no_basis() -> None:
    ruled = rule_on_evidence("false", 0.9, [], [LEAD])
    assert ruled.verdict == "unproven" and ruled.basis == []
    assert ruled.lean is not None and ruled.lean.outcome == "false"
    assert not can_settle([], [LEAD])
    assert LEAD.label_lead and image_basis(LEAD) == ""


def test_a_label_on_a_fact_checkers_copy_of_the_image_is_a_basis() -> None:
    ruled = rule_on_evidence("false", 0.9, [], [CONFIRMED])
    assert ruled.verdict == "false" and ruled.basis == ["img-1-label"]
    assert can_settle([], [CONFIRMED]) and not CONFIRMED.label_lead


@pytest.mark.parametrize("provider", [LABEL_LEAD, LABEL_CONFIRMED, VISION, "reverse image search"])
def test_no_finding_on_an_image_grounds_true(provider: str) -> None:
    stamped_true = _image("img-1-label", provider, "true")
    ruled = rule_on_evidence("true", 0.95, [], [stamped_true])
    assert ruled.verdict == "unproven" and ruled.basis == []
    assert image_basis(stamped_true) == "" and not can_settle([], [stamped_true])


def test_a_vision_finding_still_carries_misleading() -> None:
    seen = _image("img-1-vision", VISION, "misleading")
    ruled = rule_on_evidence("misleading", 0.7, [], [seen, LEAD])
    assert ruled.verdict == "misleading" and ruled.basis == ["img-1-vision"]


@pytest.mark.parametrize(
    ("band", "tampering"), [("unrelated", 0), ("supports", 80), ("misleading", 90)]
)
def test_a_vision_finding_alone_grounds_misleading_at_most(band: str, tampering: int) -> None:
    """An image unrelated to its caption, or likely edited, points to "misleading", and
    a finding stored when it pointed to "false" grounds no more: a judge's "false" on it
    alone stays unproven."""
    found = VisionFinding(
        description="A crowd on a bridge.", miscaption_rate=95, band=band,
        miscaption_reason="x", tampering=tampering, tampering_reason="y",
    )  # fmt: skip
    assert vision_outcome(found) == "misleading"
    stored = _image("img-1-vision", VISION, "false")  # a report from before the rule
    assert image_basis(stored) == "misleading" and can_settle([], [stored])
    ruled = rule_on_evidence("false", 0.9, [], [stored])
    assert ruled.verdict == "unproven" and ruled.basis == []
    assert rule_on_evidence("misleading", 0.9, [], [stored]).verdict == "misleading"


# ------------------------------------------------------------------ the items of an image


class _Pages(ReverseImageBackend):
    name = "images:test"

    def __init__(self, *pages: tuple[str, str]) -> None:
        self.pages = [ImageSighting(url=u, title="A page", relation=r) for u, r in pages]

    async def search(self, image: PostImage, max_results: int) -> list[ImageSighting]:
        return self.pages[:max_results]


def _post(*lines: str) -> ReadPost:
    text = "\n".join(lines)
    finding = ImageFinding(
        index=1, bytes=3, width=1, height=1, media_type="image/png", text=text,
        labels=find_labels(text),
    )  # fmt: skip
    return ReadPost.of(Post(text=text, images=(PostImage(data=b"png"),)), (finding,))


async def _items(post: ReadPost, *pages: tuple[str, str]) -> dict[str, EvidenceItem]:
    found = await examine_images(
        post, cast(Any, None), (), vision=False, reverse=_Pages(*pages), max_results=5
    )
    return {item.id: item for item in found.items}


async def test_false_printed_on_an_image_is_a_lead_unless_a_fact_checker_has_it() -> None:
    post = _post("Springfield bans bicycles", "FALSE")
    lead = (await _items(post, (NEWS_PAGE, "same source"), (CHECKER_PAGE, "same event")))[
        "img-1-label"
    ]
    assert lead.provider == LABEL_LEAD and lead.rating == "false" and lead.url == ""
    assert 'carries the words "FALSE"' in lead.text and "not a fact-checker's rating" in lead.text
    assert image_basis(lead) == ""

    confirmed = (await _items(post, (NEWS_PAGE, "same source"), (CHECKER_PAGE, "same source")))[
        "img-1-label"
    ]
    assert confirmed.provider == LABEL_CONFIRMED and confirmed.url == CHECKER_PAGE
    assert "politifact.com" in confirmed.title and image_basis(confirmed) == "false"


async def test_each_page_that_has_the_image_is_classified_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    classified: list[str] = []
    classify = SourceQuality.classify

    def counted(self: SourceQuality, url: str) -> Credibility:
        classified.append(url)
        return classify(self, url)

    monkeypatch.setattr(SourceQuality, "classify", counted)
    post = _post("Springfield bans bicycles", "FALSE")
    pages = ((NEWS_PAGE, "same source"), (CHECKER_PAGE, "same source"))
    confirmed = (await _items(post, *pages))["img-1-label"]
    assert confirmed.provider == LABEL_CONFIRMED and "politifact.com" in confirmed.title
    assert classified == [NEWS_PAGE, CHECKER_PAGE]  # the fact-checker's page not again


@pytest.mark.parametrize("stamp", ["FACT CHECK: MOSTLY TRUE ✅", "Correct attribution"])
async def test_true_printed_on_an_image_makes_no_evidence(stamp: str) -> None:
    post = _post("Springfield bans bicycles", stamp)
    assert [h.outcome for h in post.findings[0].labels] == ["true"]
    items = await _items(post, (CHECKER_PAGE, "same source"))  # even on a fact-checker's site
    assert "img-1-label" not in items
    assert all(image_basis(item) == "" for item in items.values())


# ------------------------------------------------------------------ what people read


def test_the_card_says_the_image_carries_the_words() -> None:
    post = _post("Springfield bans bicycles", "FACT CHECK: MOSTLY TRUE ✅")
    base = triaged_report(Triage(kind="no_claim", reason="r"), Usage(), {}, [])
    report = base.model_copy(
        update={"verdict": "unproven", "images": [post.findings[0]], "evidence": [LEAD]}
    )
    notes = report_card("c1", report).notes
    assert 'The image carries the words "FACT CHECK: MOSTLY TRUE ✅".' in notes
    assert not any("fact-checker's label" in note for note in notes)
    assert evidence_weight(LEAD) == "the image carries these words · a lead, not a rating"
    assert "points to “false”" in evidence_weight(CONFIRMED)
