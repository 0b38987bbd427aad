"""The pictures of a Discord post: which attachments are pictures, what is refused before
anything is downloaded, and the download itself.

A message's attachment is a picture when Discord says its media type is ``image/*`` or
its name ends like a picture's; anything else (a PDF, a video) is left out, and the
message's text is checked without it. The picture given to ``/factcheck``'s ``image``
option is always read as one: the engine's reader refuses, with its own sentence,
whatever is not a picture it can read (an SVG, a text file named ``.jpg``, a damaged
file). An attachment Discord declares larger than :data:`MAX_PICTURE_BYTES`, or more
than :data:`MAX_PICTURES` of them, is refused before a byte is downloaded.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import aiohttp
import discord

from zofia_engine.errors import InvalidPostError

__all__ = [
    "MAX_PICTURES",
    "MAX_PICTURE_BYTES",
    "download_pictures",
    "looks_like_picture",
    "message_pictures",
    "refuse_before_download",
]

log = logging.getLogger(__name__)

#: the engine's caps (``[images] max_bytes`` and ``max_images`` by default)
MAX_PICTURE_BYTES = 10_000_000
MAX_PICTURES = 4
_PICTURE_SUFFIXES = (
    ".jpg",
    ".jpeg",
    ".jfif",
    ".png",
    ".webp",
    ".gif",
    ".svg",
    ".bmp",
    ".tif",
    ".tiff",
    ".heic",
    ".heif",
    ".avif",
)
NOT_DOWNLOADED = "I could not download the picture from Discord; please send it again."


def looks_like_picture(attachment: discord.Attachment) -> bool:
    """Whether Discord calls the attachment an image, or its name ends like a picture's."""
    kind = (attachment.content_type or "").split(";")[0].strip().lower()
    return kind.startswith("image/") or attachment.filename.lower().endswith(_PICTURE_SUFFIXES)


def message_pictures(message: discord.Message) -> list[discord.Attachment]:
    """The attachments of ``message`` that are pictures, in the message's order."""
    return [attachment for attachment in message.attachments if looks_like_picture(attachment)]


def _size_words(size: int) -> str:
    return f"{size / 1_000_000:.0f} MB" if size >= 1_000_000 else f"{size / 1000:.0f} kB"


def refuse_before_download(pictures: Sequence[discord.Attachment]) -> None:
    """Refuse, from what Discord declares, pictures that would be refused anyway.

    Raises:
        InvalidPostError: more than :data:`MAX_PICTURES`, or one larger than
            :data:`MAX_PICTURE_BYTES` (the sentence names which, when there are several).
    """
    if len(pictures) > MAX_PICTURES:
        raise InvalidPostError(
            f"The post has {len(pictures)} pictures; up to {MAX_PICTURES} are checked."
        )
    for n, picture in enumerate(pictures, 1):
        if picture.size > MAX_PICTURE_BYTES:
            which = f"Picture {n} of {len(pictures)}: the" if len(pictures) > 1 else "The"
            raise InvalidPostError(
                f"{which} picture is {_size_words(picture.size)}; pictures up to "
                f"{_size_words(MAX_PICTURE_BYTES)} are checked."
            )


async def download_pictures(pictures: Sequence[discord.Attachment]) -> list[tuple[bytes, str]]:
    """The bytes and declared media type of each picture, downloaded from Discord's CDN.

    Call :func:`refuse_before_download` first: nothing here looks at the sizes.

    Raises:
        InvalidPostError: Discord did not give a picture (deleted, expired, unreachable).
    """
    downloaded = []
    for picture in pictures:
        try:
            data = await picture.read()
        except (discord.HTTPException, aiohttp.ClientError, TimeoutError) as exc:
            log.warning("could not download attachment %s: %s", picture.id, exc)
            raise InvalidPostError(NOT_DOWNLOADED) from None
        downloaded.append((data, picture.content_type or ""))
    return downloaded
