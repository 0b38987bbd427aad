"""Images decoded safely with Pillow: size and pixel caps checked before any pixel is
decoded, the formats a chat sends (JPEG, PNG, WebP, the first frame of a GIF) and
nothing else, EXIF orientation applied, and every byte of metadata dropped by
re-encoding, so that neither a camera's GPS tag nor a decompression bomb goes further.
"""

from __future__ import annotations

import hashlib
import io
import logging
import warnings
from dataclasses import dataclass

from PIL import Image, ImageOps, UnidentifiedImageError

from ..errors import InvalidPostError, PostRefusal
from ..records.images import ACCEPTED

__all__ = [
    "ACCEPTED",
    "CleanImage",
    "ImageRefusedError",
    "clean_image",
    "size_words",
    "too_large",
    "too_many",
]


log = logging.getLogger(__name__)

DAMAGED = "The image is damaged or cut short; send it again."
#: Images thinner than this, or longer than MAX_ASPECT times their width, hold no
#: readable post (and stall the text detector); a JPEG is decoded at up to MAX_SIDE.
MIN_SIDE = 16
MAX_ASPECT = 12
MAX_SIDE = 4096


class ImageRefusedError(InvalidPostError):
    """An image that cannot be checked; the message is one sentence for the user."""


@dataclass(frozen=True)
class CleanImage:
    """An image as the engine passes it on: re-encoded without metadata (PNG for
    drawings and screenshots, JPEG for photographs), with the hash and size of what was
    received and a note for what was left out (the other frames of a GIF)."""

    data: bytes
    media_type: str
    width: int
    height: int
    sha256: str
    received_bytes: int
    source_format: str
    note: str = ""


def size_words(n: int) -> str:
    """A byte count in words: ``"31 MB"``, ``"870 kB"``."""
    return f"{n / 1_000_000:.0f} MB" if n >= 1_000_000 else f"{n / 1000:.0f} kB"


def too_large(size: str, max_bytes: int, *, which: str = "The image") -> ImageRefusedError:
    """The refusal of an image of ``size`` (in words: ``"31 MB"``, ``"over 20 MB"``)."""
    return ImageRefusedError(
        f"{which} is {size}; images up to {size_words(max_bytes)} are checked."
    )


def too_many(count: int, max_images: int) -> InvalidPostError:
    """The refusal of a post with more images than a post may have."""
    return InvalidPostError(PostRefusal.TOO_MANY_IMAGES, count=count, max_images=max_images)


def _looks_like_svg(data: bytes) -> bool:
    head = data[:2048].lstrip().lower()
    return head.startswith((b"<?xml", b"<svg", b"<!doctype svg")) or b"<svg" in head


def clean_image(data: bytes, *, max_bytes: int, max_pixels: int) -> CleanImage:
    """``data`` decoded within the caps and re-encoded without metadata (blocking: call
    it in a worker thread).

    Raises:
        ImageRefusedError: too large, too many pixels, an SVG, not an image Pillow
            reads as JPEG, PNG, WebP or GIF, or cut short.
    """
    if len(data) > max_bytes:
        raise too_large(size_words(len(data)), max_bytes)
    if _looks_like_svg(data):
        raise ImageRefusedError(
            "SVG drawings are not checked; send the image as PNG, JPEG, WebP or GIF."
        )
    image = _opened(data)
    with image:
        _check_dimensions(image, max_pixels)
        source = image.format or ""
        frames = getattr(image, "n_frames", 1)
        try:
            image.seek(0)
            if source == "JPEG":  # decode a large JPEG at a reduced scale: less memory
                image.draft("RGB", (MAX_SIDE, MAX_SIDE))
            image.load()
            upright = ImageOps.exif_transpose(image)
            rgb = _flatten(upright)
            if max(rgb.size) > MAX_SIDE:  # what goes on is no larger than a JPEG's draft
                rgb.thumbnail((MAX_SIDE, MAX_SIDE))
        except Exception as exc:  # any decoder's failure, out of memory included
            log.info("an image could not be decoded: %r", exc)
            raise ImageRefusedError(DAMAGED) from None
    rgb.info.clear()  # nothing of the file's own (a JPEG comment, ICC, XMP) goes on
    lossy = source in ("JPEG", "WEBP")
    out = io.BytesIO()
    rgb.save(out, format="JPEG" if lossy else "PNG", quality=92, optimize=not lossy)
    note = f"only the first of the GIF's {frames} frames was read" if frames > 1 else ""
    return CleanImage(
        data=out.getvalue(),
        media_type="image/jpeg" if lossy else "image/png",
        width=rgb.width,
        height=rgb.height,
        sha256=hashlib.sha256(data).hexdigest(),
        received_bytes=len(data),
        source_format=source,
        note=note,
    )


def _opened(data: bytes) -> Image.Image:
    """``data`` opened (its header read, no pixel decoded yet) as one of the accepted
    formats, a decompression bomb refused.

    Raises:
        ImageRefusedError: not an image Pillow reads as one of them, or cut short.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            return Image.open(io.BytesIO(data), formats=list(ACCEPTED))
    except (UnidentifiedImageError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageRefusedError(
            "This file is not an image I can read; send a PNG, JPEG, WebP or GIF."
        ) from None
    except Exception as exc:  # a header cut short, or any other decoder's failure
        log.info("an image's header could not be read: %r", exc)
        raise ImageRefusedError(DAMAGED) from None


def _check_dimensions(image: Image.Image, max_pixels: int) -> None:
    """Refuse an opened image with more than ``max_pixels`` pixels, or too thin or too
    long to hold a readable post (MIN_SIDE, MAX_ASPECT).

    Raises:
        ImageRefusedError: what is wrong with its size, in one sentence.
    """
    pixels = image.width * image.height
    if pixels > max_pixels:
        raise ImageRefusedError(
            f"The image is {pixels / 1e6:.0f} megapixels; images up to "
            f"{max_pixels / 1e6:.0f} megapixels are checked."
        )
    short, long = sorted(image.size)
    if short < MIN_SIDE or long > MAX_ASPECT * short:
        raise ImageRefusedError(
            f"The image is {image.width}×{image.height} pixels, too long or thin to "
            "read; send the part that matters."
        )


def _flatten(image: Image.Image) -> Image.Image:
    """RGB, transparent parts on white (how a chat app shows them)."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        white = Image.new("RGB", rgba.size, "white")
        white.paste(rgba, mask=rgba.getchannel("A"))
        return white
    return image.convert("RGB")
