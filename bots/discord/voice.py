"""The voice note of a Discord post: which attachment is one (a voice message, or any file
Discord calls ``audio/*`` or named like audio), what is refused before it is downloaded
(a size or a duration, ``duration_secs``, past the ``[audio]`` caps), and the download.

The engine hears it, and refuses with its own sentence a file in no format it
transcribes or a damaged one.
"""

from __future__ import annotations

import discord

from bots.render.words import ENGLISH, N_, Words
from bots.service.audio import (
    AudioSettings,
    PostAudio,
    looks_like_audio,
    refuse_declared,
    too_large,
)

from .attachments import download

__all__ = ["NOT_DOWNLOADED", "download_voice", "message_voice", "refuse_voice"]

NOT_DOWNLOADED = N_("I could not download the voice note from Discord; please send it again.")


def message_voice(message: discord.Message) -> discord.Attachment | None:
    """The first attachment of ``message`` that is audio (a voice message is one), or
    ``None``."""
    found = (a for a in message.attachments if looks_like_audio(a.content_type, a.filename))
    return next(found, None)


def refuse_voice(attachment: discord.Attachment, settings: AudioSettings) -> None:
    """Refuse, from what Discord declares (its size, and a voice message's
    ``duration_secs``), a voice note the engine would refuse anyway.

    Raises:
        AudioRefusedError: over ``[audio] max_bytes`` or ``max_duration_s``.
    """
    refuse_declared(attachment.size, attachment.duration, settings)


async def download_voice(
    attachment: discord.Attachment, settings: AudioSettings, words: Words = ENGLISH
) -> PostAudio:
    """The voice note's bytes, downloaded from Discord's CDN (call :func:`refuse_voice`
    first), with its declared media type and duration; a failed download said in
    ``words`` (the chat's language).

    Raises:
        AudioRefusedError: more bytes came than the cap.
        InvalidPostError: Discord did not give it (deleted, expired, unreachable).
    """
    data = await download(attachment, words(NOT_DOWNLOADED))
    if len(data) > settings.max_bytes:
        raise too_large(len(data), settings)
    kind = attachment.content_type or ""
    return PostAudio(data=data, media_type=kind, duration_s=attachment.duration)
