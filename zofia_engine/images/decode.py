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

from ..errors import InvalidPostError
from ..records.images import ACCEPTED
from ..refusals import POST_REFUSALS, PostRefusal, size_words

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

DAMAGED = POST_REFUSALS[PostRefusal.IMAGE_DAMAGED]
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


def too_large(
    size: int, max_bytes: int, *, what: str = "image", n: int = 1, of: int = 1
) -> ImageRefusedError:
    """The refusal of an image of ``size`` bytes (a :class:`~..refusals.SizeOver` if only
    a bound is known), image ``n`` of ``of``, sent as an ``"image"`` or a ``"file"``."""
    if of > 1:
        kind = PostRefusal.NTH_FILE_TOO_LARGE if what == "file" else PostRefusal.NTH_IMAGE_TOO_LARGE
        return ImageRefusedError(kind, size=size, max_size=max_bytes, n=n, of=of)
    kind = PostRefusal.FILE_TOO_LARGE if what == "file" else PostRefusal.IMAGE_TOO_LARGE
    return ImageRefusedError(kind, size=size, max_size=max_bytes)


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
        raise too_large(len(data), max_bytes)
    if _looks_like_svg(data):
        raise ImageRefusedError(PostRefusal.IMAGE_SVG)
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
            raise ImageRefusedError(PostRefusal.IMAGE_DAMAGED) from None
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
        raise ImageRefusedError(PostRefusal.NOT_AN_IMAGE) from None
    except Exception as exc:  # a header cut short, or any other decoder's failure
        log.info("an image's header could not be read: %r", exc)
        raise ImageRefusedError(PostRefusal.IMAGE_DAMAGED) from None


def _check_dimensions(image: Image.Image, max_pixels: int) -> None:
    """Refuse an opened image with more than ``max_pixels`` pixels, or too thin or too
    long to hold a readable post (MIN_SIDE, MAX_ASPECT).

    Raises:
        ImageRefusedError: what is wrong with its size, in one sentence.
    """
    pixels = image.width * image.height
    if pixels > max_pixels:
        raise ImageRefusedError(
            PostRefusal.IMAGE_TOO_MANY_PIXELS,
            megapixels=round(pixels / 1e6),
            max_megapixels=round(max_pixels / 1e6),
        )
    short, long = sorted(image.size)
    if short < MIN_SIDE or long > MAX_ASPECT * short:
        raise ImageRefusedError(
            PostRefusal.IMAGE_OUT_OF_SHAPE, width=image.width, height=image.height
        )


def _flatten(image: Image.Image) -> Image.Image:
    """RGB, transparent parts on white (how a chat app shows them)."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        white = Image.new("RGB", rgba.size, "white")
        white.paste(rgba, mask=rgba.getchannel("A"))
        return white
    return image.convert("RGB")
