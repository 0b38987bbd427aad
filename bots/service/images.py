"""Images in chat messages, the rules every front-end shares: which attachments are
images, and the refusals that need no download (more images than a post may have,
a file that declares itself too large), in the engine's own sentences and caps. The
service reads a post (:mod:`.posts`); the bots take these rules from here, never from
the engine's decoding.

The engine decides what the bytes are: it refuses a non-image, an SVG, a bomb or a
truncated file with one sentence of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.decode import size_words, too_large, too_many
from zofia_engine.images.reader import NO_TEXT

__all__ = [
    "IMAGE_SUFFIXES",
    "NO_TEXT",
    "looks_like_image",
    "refuse_declared",
    "size_words",
    "too_large",
]

#: names a file may have to be taken for an image whatever its declared media type
IMAGE_SUFFIXES = (
    ".jpg", ".jpeg", ".jpe", ".jfif", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff",
    ".heic", ".heif", ".avif", ".svg",
)  # fmt: skip


def looks_like_image(media_type: str | None, filename: str | None) -> bool:
    """A file sent as ``image/*`` or named like an image."""
    kind = (media_type or "").split(";")[0].strip().lower()
    return kind.startswith("image/") or (filename or "").lower().endswith(IMAGE_SUFFIXES)


def refuse_declared(
    sizes: Sequence[int | None],
    settings: ImageSettings,
    what: str | Sequence[str] = "image",
) -> None:
    """Refuse, from what the platform declares, images the engine would refuse anyway
    (``None``: a size not declared). ``what`` names them in the sentence: one word for
    all, or one per image ("image", "file").

    Raises:
        InvalidPostError: more images than ``settings.max_images``.
        ImageRefusedError: one declares more than ``settings.max_bytes``.
    """
    if len(sizes) > settings.max_images:
        raise too_many(len(sizes), settings.max_images)
    words = [what] * len(sizes) if isinstance(what, str) else list(what)
    for n, (size, word) in enumerate(zip(sizes, words, strict=True), 1):
        if size is not None and size > settings.max_bytes:
            raise too_large(size, settings.max_bytes, what=word, n=n, of=len(sizes))
