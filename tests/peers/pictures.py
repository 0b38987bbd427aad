"""Pictures made on the spot for the image tests and bench/image.py: rendered headlines
and posts with known text, and the bad files of the issue (a pixel bomb, a truncated
JPEG, a text file named .jpg, an SVG, an animated GIF)."""

from __future__ import annotations

import functools
import io
import random
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.decode import CleanImage
from zofia_engine.images.ocr import OCRResult, RapidOCRBackend

__all__ = [
    "ScriptedOCR",
    "animated_gif",
    "cer",
    "headline",
    "pixel_bomb",
    "shared_ocr",
    "svg",
    "truncated_jpeg",
    "tweet",
    "with_exif",
]


@functools.cache
def shared_ocr() -> RapidOCRBackend:
    """One real RapidOCR for the whole test session, as ``ImageReader(ImageSettings())``
    builds it (the default least confidence and picture size): loaded on first use, and
    its first, slower read paid once, not once per reader. It reads one picture at a
    time, whichever test's reader asks; give it to a reader with
    ``ImageReader(ImageSettings(), ocr=shared_ocr())``."""
    settings = ImageSettings()
    return RapidOCRBackend(settings.min_ocr_confidence, settings.max_ocr_pixels)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _save(image: Image.Image, fmt: str = "PNG", **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def headline(
    lines: list[str],
    *,
    size: tuple[int, int] = (1080, 1350),
    fmt: str = "PNG",
    font_size: int = 46,
    stamp: str = "",
) -> bytes:
    """A phone-sized picture with ``lines`` written on it, and a stamp (``FALSE``) across
    its lower part when ``stamp`` is given."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    font = _font(font_size)
    y = 80
    for line in lines:
        draw.text((60, y), line, fill="black", font=font)
        y += int(font_size * 1.6)
    if stamp:
        draw.rectangle((60, size[1] - 300, size[0] - 60, size[1] - 150), fill=(200, 0, 0))
        draw.text((100, size[1] - 270), stamp, fill="white", font=_font(80))
    return _save(image, fmt)


def tweet(name: str, handle: str, lines: list[str], *, seed: int = 0) -> bytes:
    """A screenshot-like post: a name and handle in grey, then the text, at phone size."""
    rng = random.Random(seed)
    image = Image.new("RGB", (1080, 1100), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.ellipse((50, 60, 170, 180), fill=(rng.randrange(256), 120, 200))
    draw.text((200, 70), name, fill="black", font=_font(44))
    draw.text((200, 125), handle, fill=(110, 110, 110), font=_font(38))
    y = 240
    for line in lines:
        draw.text((60, y), line, fill="black", font=_font(44))
        y += 72
    return _save(image)


def with_exif(data: bytes) -> bytes:
    """``data`` (any picture) as a JPEG carrying GPS and camera tags and rotated by its
    EXIF orientation (6: shown turned 90° clockwise)."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation
    exif[0x010F] = "ZoFia Test Camera"  # make
    exif[0x8825] = {1: "N", 2: (48.0, 51.0, 29.0)}  # GPS
    return _save(image.rotate(90, expand=True), "JPEG", exif=exif, quality=90)


def pixel_bomb(megapixels: int = 60) -> bytes:
    """A small PNG that decodes to ``megapixels`` million pixels."""
    side = int((megapixels * 1_000_000) ** 0.5)
    return _save(Image.new("1", (side, side)), "PNG", optimize=True)


def truncated_jpeg() -> bytes:
    data = headline(["A photo cut short"], fmt="JPEG")
    return data[: len(data) // 2]


def svg() -> bytes:
    return (
        b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" '
        b'height="10"><script>alert(1)</script><text>FAKE</text></svg>'
    )


def animated_gif(first: list[str], second: list[str]) -> bytes:
    """Two frames with different text; only the first should be read."""
    frames = [
        Image.open(io.BytesIO(headline(t, size=(900, 500)))).convert("P") for t in (first, second)
    ]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=500, loop=0)
    return out.getvalue()


def cer(read: str, truth: str) -> float:
    """Character error rate of ``read`` against ``truth``: the edit distance over the
    truth's length, case and runs of white space folded."""
    a, b = " ".join(read.split()).casefold(), " ".join(truth.split()).casefold()
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1] / max(1, len(b))


class ScriptedOCR:
    """An OCR backend (the engine's ``OCRBackend`` port) that reads ``text`` in every
    picture: for tests of what the engine does with a picture's words, not of the OCR."""

    def __init__(self, text: str) -> None:
        self.text = text

    def read(self, image: CleanImage) -> OCRResult:
        return OCRResult(self.text, 0.99 if self.text else None, 1.0)


def first_lines_read(post: Any) -> str:
    """The first two lines of text the checker got from ``post``'s first picture, on one
    line: what the card's "Read from the picture" line must show."""
    lines = [line for line in post.findings[0].text.splitlines() if line.strip()]
    return " ".join(lines[:2])
