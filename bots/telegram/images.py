"""Images in Telegram messages: which file a message's image is (the largest size of
a Telegram photo that fits the cap, or a document that is an image or is named like one), its
download within that cap, and albums (messages sharing a ``media_group_id``) gathered
into one post.

The bytes are only fetched here; the engine decides what they are (it refuses a
non-image, an SVG, a decompression bomb or a truncated file with one sentence).
"""

from __future__ import annotations

import asyncio
import mimetypes
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from telegram import Bot, Document, Message
from telegram.ext.filters import MessageFilter

from bots.render.words import ENGLISH, N_, Words
from bots.service.images import looks_like_image, refuse_declared, too_large
from bots.telegram.files import download_file
from zofia_engine.image_settings import ImageSettings

__all__ = [
    "IMAGE_DOCUMENT",
    "NOT_DOWNLOADED",
    "Albums",
    "ImageFile",
    "album_caption",
    "download_images",
    "has_image",
    "image_of",
]

NOT_DOWNLOADED = N_("I could not download the image from Telegram; please send it again.")


@dataclass(frozen=True)
class ImageFile:
    """A message's image as Telegram describes it: the file to ask for, the size it
    declares (``None``: not said), and the media type it was sent as."""

    file_id: str
    file_size: int | None
    media_type: str
    what: str = "image"  # "image" (a Telegram photo) or "file" (a document): for sentences


def is_image_document(document: Document) -> bool:
    """A document sent as an image (``image/*``) or named like one."""
    return looks_like_image(document.mime_type, document.file_name)


class _ImageDocument(MessageFilter):
    __slots__ = ()

    def filter(self, message: Message) -> bool:
        return message.document is not None and is_image_document(message.document)


#: messages whose document is an image (see :func:`is_image_document`)
IMAGE_DOCUMENT = _ImageDocument(name="IMAGE_DOCUMENT")


def image_of(message: Message, max_bytes: int) -> ImageFile | None:
    """The image a message carries, or ``None``.

    A Telegram photo is the largest of its sizes whose declared size is within ``max_bytes`` (a
    size that declares none counts as within); when none is, the smallest, which is
    then refused by its size before it is downloaded.
    """
    if message.photo:
        sizes = sorted(message.photo, key=lambda p: (p.width * p.height, p.file_size or 0))
        fitting = [p for p in sizes if p.file_size is None or p.file_size <= max_bytes]
        chosen = fitting[-1] if fitting else sizes[0]
        return ImageFile(chosen.file_id, chosen.file_size, "image/jpeg")
    document = message.document
    if document is not None and is_image_document(document):
        kind = (document.mime_type or "").lower()
        if not kind.startswith("image/"):
            kind = mimetypes.guess_type(document.file_name or "")[0] or "application/octet-stream"
        return ImageFile(document.file_id, document.file_size, kind, "file")
    return None


def has_image(message: Message) -> bool:
    return bool(message.photo) or (
        message.document is not None and is_image_document(message.document)
    )


async def download_images(
    bot: Bot, messages: Sequence[Message], settings: ImageSettings, words: Words = ENGLISH
) -> list[tuple[bytes, str]]:
    """The images of ``messages`` (a message, or an album's), downloaded, each as
    ``(bytes, media type)`` for :func:`bots.service.posts.post_from_message`.

    Nothing is downloaded when there are more images than a post may have, or when
    any of them declares more than ``settings.max_bytes``.

    Raises:
        InvalidPostError: too many images, or Telegram did not give one (said in
            ``words``, the chat's language).
        ImageRefusedError: an image is too large.
    """
    cap = settings.max_bytes
    files = [file for m in messages if (file := image_of(m, cap)) is not None]
    refuse_declared([f.file_size for f in files], settings, [f.what for f in files])
    of = len(files)
    images = []
    for n, file in enumerate(files, 1):
        refusal = partial(too_large, max_bytes=cap, what=file.what, n=n, of=of)
        data = await download_file(bot, file.file_id, cap, refusal, words(NOT_DOWNLOADED))
        images.append((data, file.media_type))
    return images


def album_caption(messages: Sequence[Message]) -> str:
    """An album's text: its captions (usually one, on any of its messages), in order."""
    captions: list[str] = []
    for message in messages:
        caption = (message.caption or message.text or "").strip()
        if caption and caption not in captions:
            captions.append(caption)
    return "\n\n".join(captions)


@dataclass
class _Album:
    messages: list[Message]
    last: float


@dataclass
class Albums:
    """The albums being gathered: Telegram sends each image of an album as a message
    of its own, all with the same ``media_group_id``, within moments of each other."""

    _open: dict[tuple[int, str], _Album] = field(default_factory=dict)

    @staticmethod
    def _key(message: Message) -> tuple[int, str]:
        return (message.chat_id, message.media_group_id or "")

    def add(self, message: Message) -> bool:
        """Take an album's message (synchronously: call it before anything is awaited).

        Returns:
            ``True`` when it opens the album: the caller starts the one check, which
            calls :meth:`gather`. ``False`` when it joined an album being gathered.
        """
        now = asyncio.get_running_loop().time()
        album = self._open.get(self._key(message))
        if album is not None:
            album.messages.append(message)
            album.last = now
            return False
        self._open[self._key(message)] = _Album([message], now)
        return True

    def discard(self, opener: Message) -> None:
        """Forget the album ``opener`` opened (its check could not start)."""
        self._open.pop(self._key(opener), None)

    async def gather(self, opener: Message, wait_s: float) -> list[Message]:
        """The album ``opener`` opened, once no message joined it for ``wait_s`` seconds;
        oldest first. Messages of the album that come later open another one."""
        key = self._key(opener)
        album = self._open[key]
        loop = asyncio.get_running_loop()
        try:
            while (left := album.last + wait_s - loop.time()) > 0:
                await asyncio.sleep(left)
        finally:
            self._open.pop(key, None)
        return sorted(album.messages, key=lambda m: m.message_id)
