"""What a check learnt from an image, as the report keeps it: never the image itself,
only its hash, its size and what was read and found in it."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "ACCEPTED",
    "ImageFinding",
    "ImageSighting",
    "LabelHit",
    "MiscaptionBand",
    "VisionFinding",
]

#: The formats read (Pillow's names) → the media type each is sent as.
ACCEPTED = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}

#: AgentFact's miscaption scoring guide (appendix, IR-2), band by band.
MiscaptionBand = Literal["supports", "missing context", "misleading", "unrelated"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LabelHit(_Record):
    """Words fact-checkers stamp (AgentFact, Table S1) printed on the image: the
    word, the line it stood on, and the outcome it stands for. Anyone can print them:
    what they may count for is :mod:`.grounds`' rule."""

    word: str
    line: str
    outcome: str


class VisionFinding(_Record):
    """A vision model's reading of one image against the post's text (AgentFact's
    image checks): a description, the miscaption rate (0–100) with its band, and the
    likelihood that the image was tampered with (0–100)."""

    description: str
    miscaption_rate: int
    band: MiscaptionBand
    miscaption_reason: str
    tampering: int
    tampering_reason: str


class ImageSighting(_Record):
    """A page where the same image (``same source``) or an image of the same event
    was found by reverse image search; ``published`` when the source gives a date."""

    url: str
    title: str
    relation: Literal["same source", "same event"]
    published: dt.date | None = None


class ImageFinding(_Record):
    """One image of the post: its SHA-256 and size as received, its pixel size, the
    text read from it (with the mean confidence and the milliseconds it took), labels,
    the vision model's finding and the reverse search's sightings; ``notes`` say what
    was not done for it and why."""

    index: int
    bytes: int
    width: int
    height: int
    media_type: str
    text: str = ""
    ocr_confidence: float | None = None
    ocr_ms: float = 0.0
    labels: list[LabelHit] = []
    vision: VisionFinding | None = None
    sightings: list[ImageSighting] = []
    notes: list[str] = []
    sha256: str = ""  # empty where it is not shown (the report page's JSON)
