"""The pictures of a Discord post: which attachments are pictures, what is refused before
anything is downloaded, and the download itself.

A message's attachment is a picture when Discord says its media type is ``image/*`` or
its name ends like a picture's; anything else (a PDF, a video) is left out, and the
message's text is checked without it. The picture given to ``/factcheck``'s ``image``
option is always read as one: the engine's reader refuses, with its own sentence,
whatever is not a picture it can read (an SVG, a text file named ``.jpg``, a damaged
file). An attachment Discord declares larger than the engine's cap, or more
than a post may have, is refused before a byte is downloaded.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import aiohttp
import discord

from bots.service.pictures import looks_like_picture, refuse_declared
from zofia_engine.errors import InvalidPostError
from zofia_engine.image_settings import ImageSettings

__all__ = [
    "download_pictures",
    "is_picture",
    "message_pictures",
    "refuse_before_download",
]

log = logging.getLogger(__name__)

NOT_DOWNLOADED = "I could not download the picture from Discord; please send it again."


def is_picture(attachment: discord.Attachment) -> bool:
    """Whether Discord calls the attachment an image, or its name ends like a picture's."""
    return looks_like_picture(attachment.content_type, attachment.filename)


def message_pictures(message: discord.Message) -> list[discord.Attachment]:
    """The attachments of ``message`` that are pictures, in the message's order."""
    return [attachment for attachment in message.attachments if is_picture(attachment)]


def refuse_before_download(pictures: Sequence[discord.Attachment], settings: ImageSettings) -> None:
    """Refuse, from what Discord declares, pictures the engine would refuse anyway
    (more than a post may have, or one declared over the size cap).

    Raises:
        InvalidPostError: as :func:`bots.service.pictures.refuse_declared` says.
    """
    refuse_declared([picture.size for picture in pictures], settings)


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
