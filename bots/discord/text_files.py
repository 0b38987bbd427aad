"""A post too long to paste, as a text file.

Discord's client takes at most :data:`~.commands.MAX_TEXT` characters in
``/factcheck``'s ``text`` option, and a message at most 2,000 (4,000 with Nitro): a
longer paste becomes a ``message.txt`` attachment. So a post's text may come as a
``.txt`` file: ``/factcheck file:`` or **Apps → Fact-check** on such a message. The
file is refused before a byte is downloaded when Discord declares it over
:data:`MAX_TEXT_BYTES`, downloaded once the request is admitted, and read as UTF-8.
The engine then checks the post as any other: it keeps the first ``MAX_POST_CHARS``
(50,000) characters, and its models see the first ``agents.max_post_chars`` (6,000)
with a note on the card that the post was cut.
"""

from __future__ import annotations

import discord

from bots.render.words import ENGLISH, N_, Words
from bots.service.images import looks_like_image
from zofia_engine.errors import InvalidPostError

from .attachments import download

__all__ = [
    "MAX_TEXT_BYTES",
    "NOT_TEXT",
    "is_text_file",
    "read_text_file",
    "refuse_text_file",
    "text_file_of",
]

#: the largest text file read (Discord declares its size): 50,000 characters and more
MAX_TEXT_BYTES = 200_000
NOT_TEXT = N_(
    "The file option takes the post's text as a .txt file (UTF-8); for an image of the "
    "post, use the image option."
)
TOO_LARGE = N_("That text file is over 200 KB; send the post's first part as a .txt file.")
UNREADABLE = N_("That file is not text I can read: send the post's text as a .txt file (UTF-8).")
NOT_DOWNLOADED = N_("I could not download the text file from Discord; please send it again.")


def is_text_file(attachment: discord.Attachment) -> bool:
    """Whether Discord says the attachment is plain text, or it is named ``*.txt``; a
    file named like an image is an image (:mod:`.images`), whatever it says."""
    if looks_like_image(None, attachment.filename):
        return False
    kind = (attachment.content_type or "").split(";")[0].strip().lower()
    return kind == "text/plain" or attachment.filename.lower().endswith(".txt")


def text_file_of(message: discord.Message) -> discord.Attachment | None:
    """The first text file of ``message`` (a long message's ``message.txt``), if any."""
    return next((a for a in message.attachments if is_text_file(a)), None)


def refuse_text_file(attachment: discord.Attachment, words: Words = ENGLISH) -> None:
    """Refuse, from what Discord declares, a file too large to read (said in ``words``,
    the chat's language).

    Raises:
        InvalidPostError: it declares more than :data:`MAX_TEXT_BYTES`.
    """
    if attachment.size > MAX_TEXT_BYTES:
        raise InvalidPostError(words(TOO_LARGE))


async def read_text_file(attachment: discord.Attachment, words: Words = ENGLISH) -> str:
    """The text of ``attachment``, downloaded from Discord's CDN and read as UTF-8 (a
    byte-order mark dropped), its refusals said in ``words`` (the chat's language).
    Call :func:`refuse_text_file` first.

    Raises:
        InvalidPostError: it could not be downloaded, is larger than it declared, or is
            not UTF-8 text.
    """
    data = await download(attachment, words(NOT_DOWNLOADED))
    if len(data) > MAX_TEXT_BYTES:
        raise InvalidPostError(words(TOO_LARGE))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidPostError(words(UNREADABLE)) from None
    if "\x00" in text:
        raise InvalidPostError(words(UNREADABLE))
    return text
