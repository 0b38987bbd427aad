"""The post a message stands for, read by the service once for every front-end: a
message that is only a link is fetched here, and its text, images and voice note go to
the engine as they are. The bots take this from here, never the engine's fetching.

A check run from the store (a queued check on a worker, a check resumed after a crash)
has only its post's text to read again: what was read from its images and heard in its
voice note is kept with the check when it is recorded (:func:`keep_media_reading`) and
joins that reading (:func:`read_stored`), so that its report and card say what was read
and heard."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from storage.media_readings import MediaReading
from storage.store import CheckRow, CheckStore
from zofia_engine.fetch import fetch_article
from zofia_engine.ports import Checker
from zofia_engine.post import Post, PostAudio, PostImage, ReadPost

from .records import Fetched, Message

__all__ = [
    "costs_work",
    "keep_media_reading",
    "post_from_link",
    "post_from_message",
    "post_of",
    "read_stored",
]

_ONLY_A_URL = re.compile(r"\s*(https?://\S+)\s*", re.IGNORECASE)
_FIRST_URL = re.compile(r"https?://[^\s<>\"']+", re.IGNORECASE)


async def post_from_message(
    text: str,
    *,
    images: Sequence[tuple[bytes, str]] = (),
    audio: PostAudio | None = None,
    published: dt.date | None = None,
    origin: str = "",
    language: str = "",
    allow_private_urls: bool = False,
) -> Post:
    """The post a chat message stands for.

    A message's images (``(bytes, media type)`` each, as the platform sent them) and
    voice note (``audio``) are part of its post, the message's text their caption; the
    engine reads and hears them. A
    message (or caption) that is only a link is fetched and its article (or image) checked
    (private and local addresses refused unless ``allow_private_urls``); any other text
    is checked as it is, with its first link kept as the post's URL. ``language`` is
    the language the panel answers in (empty: English).

    Raises:
        InvalidPostError: the link cannot be fetched or holds no article.
    """
    attached = tuple(PostImage(data=data, media_type=kind) for data, kind in images)
    only = _ONLY_A_URL.fullmatch(text)
    if only is None:
        first = _FIRST_URL.search(text)
        return Post(
            text=text,
            url=first.group(0) if first else "",
            published=published,
            origin=origin,
            language=language,
            images=attached,
            audio=audio,
        )
    post = await post_from_link(
        only.group(1),
        published=published,
        origin=origin,
        language=language,
        allow_private_urls=allow_private_urls,
    )
    # An image (or a voice note) captioned with a link: the article and it are one post.
    if not attached and audio is None:
        return post
    return post.model_copy(update={"images": post.images + attached, "audio": audio})


async def post_from_link(
    url: str,
    *,
    published: dt.date | None = None,
    origin: str = "",
    language: str = "",
    allow_private_urls: bool = False,
) -> Post:
    """The article (or image) at ``url`` as a post (private and local addresses refused
    unless ``allow_private_urls``).

    Raises:
        InvalidPostError: the link cannot be fetched or holds no article.
    """
    article = await fetch_article(url, allow_private=allow_private_urls)
    return article.as_post(published=published, origin=origin, language=language)


def costs_work(message: Message) -> bool:
    """Whether reading ``message`` costs work (images to read, a voice note to hear, a
    platform's download, a link alone to fetch), and so waits for the request's
    admission."""
    text = message.text if message.text.strip() else message.url
    costly = message.images or message.audio is not None or message.fetch is not None
    return bool(costly) or _ONLY_A_URL.fullmatch(text) is not None


async def post_of(message: Message, fetched: Fetched | None = None) -> Post:
    """The post ``message`` stands for, with what was ``fetched`` for it: its text (a
    file's) after the message's, its images beside the message's own, its voice note
    (:func:`post_from_message`).

    Raises:
        InvalidPostError: the link cannot be fetched or holds no article.
    """
    fetched = fetched or Fetched()
    text = message.text
    if fetched.text:
        text = "\n\n".join(part for part in (text.strip(), fetched.text) if part)
    post = await post_from_message(
        text or message.url,
        images=(*message.images, *fetched.images),
        audio=fetched.audio or message.audio,
        published=message.published,
        origin=message.origin,
        language=message.language,
        allow_private_urls=message.allow_private_urls,
    )
    if message.url and not post.url:
        post = post.model_copy(update={"url": message.url})
    return post


def keep_media_reading(store: CheckStore, row: CheckRow, read: ReadPost) -> None:
    """Keep what was read from ``read``'s images and heard in its voice note with the
    check ``row`` runs (a post with neither keeps nothing; a repeat runs nothing: it
    keeps nothing) (blocking)."""
    if (read.findings or read.heard is not None) and row.repeat_of is None:
        store.media_readings.keep(row.id, MediaReading.of(read))


async def read_stored(checker: Checker, post: Post, reading: MediaReading | None) -> ReadPost:
    """A stored check's ``post`` read again, with what was read from its images and
    heard in its voice note (``reading``: :meth:`store.media_readings.get
    <storage.media_readings.MediaReadings.get>`)."""
    read = await checker.read(post)
    return read if reading is None else reading.onto(read)
