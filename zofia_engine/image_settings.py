"""Settings of image posts (AgentFact's image agent): decoding limits, the text in the
image, fact-check labels, and reverse image search."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .settings_base import SettingsSection

__all__ = ["ImageSettings", "ReverseImageSettings"]


class ReverseImageSettings(SettingsSection):
    """Where else an image appeared. ``google``: Google Cloud Vision's web detection,
    which takes the image bytes (no public URL needed); ``none`` offline."""

    backend: Literal["none", "google"] = "none"
    api_key: str = ""
    base_url: str = "https://vision.googleapis.com/v1"
    max_results: int = Field(10, ge=1, le=50)
    timeout_s: float = Field(20.0, gt=0)


class ImageSettings(SettingsSection):
    """Images in posts: at most ``max_images`` per post, each at most ``max_bytes``
    and ``max_pixels`` (a decompression bomb is refused before it is decoded). ``ocr``
    reads the text in them offline; lines read with less than ``min_ocr_confidence``
    are dropped. A vision model, when ``[llm.roles.vision]`` names one, describes each
    image and scores AgentFact's miscaption and tampering checks."""

    enabled: bool = True
    max_images: int = Field(4, ge=1, le=10)
    max_bytes: int = Field(10_000_000, ge=10_000)
    max_pixels: int = Field(40_000_000, ge=10_000)
    ocr: Literal["rapidocr", "none"] = "rapidocr"
    min_ocr_confidence: float = Field(0.5, ge=0, le=1)
    # The OCR reads an image scaled down to this area: its memory grows with it.
    max_ocr_pixels: int = Field(1_500_000, ge=100_000)
    # Images are decoded and read one at a time on a thread of their own; this many
    # more may wait (past it an image is refused: "busy"), each read within read_timeout_s.
    max_waiting: int = Field(4, ge=0)
    read_timeout_s: float = Field(60.0, gt=0)
    reverse: ReverseImageSettings = ReverseImageSettings()
