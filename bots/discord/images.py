"""The images of a Discord post: which attachments are images, what is refused before
anything is downloaded, and the download itself.

A message's attachment is an image when Discord says its media type is ``image/*`` or
its name ends like an image's; anything else (a PDF, a video) is left out, and the
message's text is checked without it. The image given to ``/factcheck``'s ``image``
option is always read as one: the engine's reader refuses, with its own sentence,
whatever is not an image it can read (an SVG, a text file named ``.jpg``, a damaged
file). An attachment Discord declares larger than the engine's cap, or more
than a post may have, is refused before a byte is downloaded.
"""

from __future__ import annotations

from collections.abc import Sequence

import discord

from bots.render.words import ENGLISH, N_, Words
from bots.service.images import looks_like_image, refuse_declared
from zofia_engine.image_settings import ImageSettings

from .attachments import download

__all__ = [
    "download_images",
    "is_image",
    "message_images",
    "refuse_before_download",
]

NOT_DOWNLOADED = N_("I could not download the image from Discord; please send it again.")


def is_image(attachment: discord.Attachment) -> bool:
    """Whether Discord calls the attachment an image, or its name ends like an image's."""
    return looks_like_image(attachment.content_type, attachment.filename)


def message_images(message: discord.Message) -> list[discord.Attachment]:
    """The attachments of ``message`` that are images, in the message's order."""
    return [attachment for attachment in message.attachments if is_image(attachment)]


def refuse_before_download(images: Sequence[discord.Attachment], settings: ImageSettings) -> None:
    """Refuse, from what Discord declares, images the engine would refuse anyway
    (more than a post may have, or one declared over the size cap).

    Raises:
        InvalidPostError: as :func:`bots.service.images.refuse_declared` says.
    """
    refuse_declared([image.size for image in images], settings)


async def download_images(
    images: Sequence[discord.Attachment], words: Words = ENGLISH
) -> list[tuple[bytes, str]]:
    """The bytes and declared media type of each image, downloaded from Discord's CDN
    (a failed download said in ``words``, the chat's language).

    Call :func:`refuse_before_download` first: nothing here looks at the sizes.

    Raises:
        InvalidPostError: Discord did not give an image (deleted, expired, unreachable).
    """
    failed = words(NOT_DOWNLOADED)
    return [(await download(image, failed), image.content_type or "") for image in images]
