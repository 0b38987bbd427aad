"""What there is to check in a Telegram message: its text, and where a forward came from."""

from __future__ import annotations

import datetime as dt

from telegram import (
    Message,
    MessageOrigin,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
)

from bots.render.words import ENGLISH, N_, Words
from bots.service.images import NO_TEXT as NO_TEXT_IN_IMAGE
from zofia_engine.text import is_visible

__all__ = [
    "NOTHING_TO_CHECK",
    "NO_TEXT",
    "describe_origin",
    "forwarded_from",
    "post_text",
    "visible_text",
]

#: an image with no text in it (the engine's sentence, whichever layer finds it)
NO_TEXT = NO_TEXT_IN_IMAGE
#: a message with nothing visible to check (said with ``words(NOTHING_TO_CHECK)``)
NOTHING_TO_CHECK = N_(
    "I found nothing to check in this message: please send the post's text, a link, "
    "or an image or screenshot of it."
)


def describe_origin(origin: MessageOrigin, words: Words = ENGLISH) -> str:
    """Who a forwarded message came from, in ``words`` (the chat's language): a channel,
    a chat, a user ("channel Rumour Daily (@rumour_daily)")."""
    if isinstance(origin, MessageOriginChannel):
        name = origin.chat.title or words("a channel")
        at = f" (@{origin.chat.username})" if origin.chat.username else ""
        said = words("channel {name}", name=f"{name}{at}")
        if origin.author_signature:
            said = words("{origin}, signed {author}", origin=said, author=origin.author_signature)
        return said
    if isinstance(origin, MessageOriginChat):
        return words("chat {name}", name=origin.sender_chat.title or words("a group"))
    if isinstance(origin, MessageOriginUser):
        at = f" (@{origin.sender_user.username})" if origin.sender_user.username else ""
        return words("user {name}", name=f"{origin.sender_user.full_name}{at}")
    if isinstance(origin, MessageOriginHiddenUser):
        return words("user {name} (hidden account)", name=origin.sender_user_name)
    return words("a forwarded message")


def forwarded_from(message: Message, words: Words = ENGLISH) -> tuple[str, dt.date | None]:
    """A forwarded message's origin, in ``words``, and the original's date (UTC): the
    post's origin and publication date; ``("", None)`` for a message that is not a
    forward."""
    if message.forward_origin is None:
        return "", None
    origin = message.forward_origin
    return describe_origin(origin, words), origin.date.astimezone(dt.UTC).date()


def visible_text(text: str) -> str:
    """``text`` without its blank ends; ``""`` when nothing in it shows (only zero-width,
    filler and space characters, U+3164 HANGUL FILLER among them: see
    :func:`~zofia_engine.text.is_visible`), so that it is refused as empty before it
    costs a check or a group's cooldown."""
    text = text.strip()
    return text if is_visible(text) else ""


def post_text(message: Message) -> str:
    """The text to check in a message: its text or its image's caption (``""`` when
    nothing in it shows: :func:`visible_text`)."""
    return visible_text(message.text or message.caption or "")
