"""The images' part of a check: what was read in each (labels), what a vision model
sees in it, and where else it appeared, as evidence items the panel can cite
(``img-1-label``, ``img-1-vision``, ``img-1-seen``). Which of them may carry a verdict
is :mod:`.grounds`' rule: words printed on an image are a lead, not a basis, unless
reverse image search found the stamped image on a fact-checker's site."""

from __future__ import annotations

import asyncio
import logging

from ..errors import LLMConfigError, SourceError
from ..llm.base import ChatMessage
from ..llm.session import CheckSession, StepFailed
from ..post import PostImage, ReadPost
from ..records.images import ImageFinding, ImageSighting, VisionFinding
from ..report import EvidenceItem
from ..retrieval.credibility import SourceQuality
from .grounds import LABEL_CONFIRMED, LABEL_LEAD, LEAD_OUTCOMES, VISION, VISION_AT_MOST
from .reverse import ReverseImageBackend
from .vision import look_at

__all__ = ["ImageEvidence", "examine_images", "fact_checker_copy", "vision_outcome"]

log = logging.getLogger(__name__)


class ImageEvidence:
    """The findings on a post's images, their evidence items and what was not done."""

    def __init__(self) -> None:
        self.findings: list[ImageFinding] = []
        self.items: list[EvidenceItem] = []
        self.notes: list[str] = []


def vision_outcome(found: VisionFinding) -> str:
    """The outcome a vision finding points to: an image that misleads, lacks context or
    is unrelated to its caption, or was likely tampered with, points to ``misleading``
    (:data:`~.grounds.VISION_AT_MOST`: a finding on a picture never points to
    ``false``); otherwise to none."""
    if found.band in ("missing context", "misleading", "unrelated") or found.tampering >= 60:
        return VISION_AT_MOST
    return ""


async def examine_images(
    read: ReadPost,
    session: CheckSession,
    shared: tuple[ChatMessage, ...],
    *,
    vision: bool,
    reverse: ReverseImageBackend | None,
    max_results: int,
) -> ImageEvidence:
    """Look at every image of ``read`` (a vision model, when ``vision``) and
    search for it (``reverse``), all at once; a failure becomes a note of fixed words
    ("image 1: reverse image search failed"), its details (a backend's host, a URL with
    its key) a line of the log: the notes reach the report page and the API."""
    out = ImageEvidence()
    images = list(zip(read.post.images, read.findings, strict=False))
    if not images:
        return out
    if not vision:
        out.notes.append("no vision model configured: the images were read for text only")
    if reverse is None:
        out.notes.append(
            "no reverse image search configured: where the images appeared before is unknown"
        )

    asked = session if vision else None  # no vision model: no session to ask it in

    async def one(image: PostImage, finding: ImageFinding) -> ImageFinding:
        # The read image: its bytes are the cleaned ones, what the models are shown.
        looked, seen = await asyncio.gather(
            _look(asked, shared, image, finding.index, out.notes),
            _search(reverse, image, max_results, finding.index, out.notes),
        )
        return finding.model_copy(update={"vision": looked, "sightings": seen})

    out.findings = list(await asyncio.gather(*(one(p, f) for p, f in images)))
    for finding in out.findings:
        out.items += _items(finding)
    return out


async def _look(
    session: CheckSession | None,
    shared: tuple[ChatMessage, ...],
    image: PostImage,
    n: int,
    notes: list[str],
) -> VisionFinding | None:
    """What the vision model asked in ``session`` sees in image ``n``; ``None`` when
    there is none (``session`` is ``None``) or it failed, noted in ``notes``."""
    if session is None:
        return None
    try:
        return await look_at(session, shared, image, n)
    except StepFailed as exc:
        log.warning("image %d: the vision model failed: %s", n, exc.reason)
        notes.append(f"image {n}: the vision model failed")
        return None
    except LLMConfigError as exc:  # e.g. a server that takes no images: not fatal here
        log.warning("image %d: the vision model refused it: %s", n, exc)
        notes.append(f"image {n}: the vision model refused it")
        return None


async def _search(
    reverse: ReverseImageBackend | None, image: PostImage, limit: int, n: int, notes: list[str]
) -> list[ImageSighting]:
    if reverse is None:
        return []
    try:
        return await reverse.search(image, limit)
    except SourceError as exc:
        log.warning("image %d: reverse image search failed: %s", n, exc)
        notes.append(f"image {n}: reverse image search failed")
        return []


def fact_checker_copy(sightings: list[ImageSighting]) -> tuple[ImageSighting, str] | None:
    """The first page reverse search found showing the same image (a full match) on a
    fact-checker's site (``data/source_labels.csv``), with that fact-checker's domain; or
    ``None``."""
    quality = SourceQuality()
    for sighting in sightings:
        if sighting.relation != "same source":
            continue
        site = quality.classify(sighting.url)
        if site.label == "fact-checker":
            return sighting, site.domain
    return None


def _label_item(found: ImageFinding) -> EvidenceItem | None:
    """The words printed on the image that point to ``false``, ``misleading`` or
    ``satire``: a lead for the panel, or a basis when a fact-checker published the
    image. Words pointing to ``true`` (or to ``unproven`` or ``scam``) make no item:
    they never count."""
    n = found.index
    hit = next((h for h in found.labels if h.outcome in LEAD_OUTCOMES), None)
    if hit is None:
        return None
    published = fact_checker_copy(found.sightings)
    if published is None:
        return EvidenceItem(
            id=f"img-{n}-label", source="image", provider=LABEL_LEAD,
            title=f"Words printed on image {n}", url="",
            text=f'Image {n} carries the words "{hit.line}" ({hit.word}). Anyone can '
            "print words on an image: they are a lead to check, not a fact-checker's rating.",
            rating=hit.outcome,
        )  # fmt: skip
    copy, domain = published
    return EvidenceItem(
        id=f"img-{n}-label", source="image", provider=LABEL_CONFIRMED,
        title=f"Image {n} as {domain} published it", url=copy.url,
        text=f'Image {n} carries the words "{hit.line}" ({hit.word}), and reverse image '
        f"search found the same image at {copy.url}, on the site of a fact-checker "
        f"({domain}).",
        rating=hit.outcome,
    )  # fmt: skip


def _items(found: ImageFinding) -> list[EvidenceItem]:
    n = found.index
    label = _label_item(found)
    items = [label] if label is not None else []
    if found.vision is not None:
        v = found.vision
        items.append(EvidenceItem(
            id=f"img-{n}-vision", source="image", provider=VISION,
            title=f"What image {n} shows", url="",
            text=f"{v.description} Miscaption rate {v.miscaption_rate}/100 ({v.band}): "
            f"{v.miscaption_reason} Tampering likelihood {v.tampering}/100: {v.tampering_reason}",
            rating=vision_outcome(v),
        ))  # fmt: skip
    if found.sightings:
        pages = "; ".join(
            f"{s.title or s.url} ({s.url}, {s.relation})" for s in found.sightings[:5]
        )
        items.append(EvidenceItem(
            id=f"img-{n}-seen", source="image", provider="reverse image search",
            title=f"Where image {n} appeared", url=found.sightings[0].url,
            text=f"The image was found on {len(found.sightings)} page(s): {pages}.",
        ))  # fmt: skip
    return items
