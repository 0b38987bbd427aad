"""Voice notes and audio files in Telegram messages: which file a message's voice note is
(a ``voice`` message, an ``audio`` file, or a document that is audio), refused from the
size and duration Telegram declares (``file_size``, ``duration``) before anything is
downloaded, and its download within the size cap.

The bytes are only fetched here; the engine decides what they are and hears them (it
refuses a file in no format it transcribes, or a damaged one, with one sentence).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import partial

from telegram import Bot, Message
from telegram.ext.filters import MessageFilter

from bots.render.words import ENGLISH, N_, Words
from bots.service.audio import (
    AudioSettings,
    PostAudio,
    looks_like_audio,
    refuse_declared,
    too_large,
)
from bots.telegram.files import download_file

__all__ = [
    "AUDIO_DOCUMENT",
    "NOT_DOWNLOADED",
    "VoiceFile",
    "download_voice",
    "refuse_voice",
    "voice_of",
]

NOT_DOWNLOADED = N_("I could not download the voice note from Telegram; please send it again.")


@dataclass(frozen=True)
class VoiceFile:
    """A message's voice note as Telegram describes it: the file to ask for, the size
    and duration it declares (``None``: not said), and the media type it was sent as."""

    file_id: str
    file_size: int | None
    duration_s: float | None
    media_type: str


class _AudioDocument(MessageFilter):
    __slots__ = ()

    def filter(self, message: Message) -> bool:
        document = message.document
        return document is not None and looks_like_audio(document.mime_type, document.file_name)


#: messages whose document is audio (sent as ``audio/*`` or named like it)
AUDIO_DOCUMENT = _AudioDocument(name="AUDIO_DOCUMENT")


def _seconds(duration: int | dt.timedelta) -> float:
    """A duration as python-telegram-bot gives it (seconds, or a timedelta)."""
    return duration.total_seconds() if isinstance(duration, dt.timedelta) else float(duration)


def voice_of(message: Message) -> VoiceFile | None:
    """The voice note a message carries (a voice message, an audio file, or a document
    that is audio), or ``None``."""
    if message.voice is not None:
        voice = message.voice
        kind = voice.mime_type or "audio/ogg"
        return VoiceFile(voice.file_id, voice.file_size, _seconds(voice.duration), kind)
    if message.audio is not None:
        audio = message.audio
        kind = audio.mime_type or "audio/mpeg"
        return VoiceFile(audio.file_id, audio.file_size, _seconds(audio.duration), kind)
    document = message.document
    if document is not None and looks_like_audio(document.mime_type, document.file_name):
        kind = document.mime_type or "application/octet-stream"
        return VoiceFile(document.file_id, document.file_size, None, kind)
    return None


def refuse_voice(file: VoiceFile, settings: AudioSettings) -> None:
    """Refuse, from what Telegram declares, a voice note the engine would refuse anyway.

    Raises:
        AudioRefusedError: it declares more than ``[audio] max_bytes`` or
            ``max_duration_s``; one sentence.
    """
    refuse_declared(file.file_size, file.duration_s, settings)


async def download_voice(
    bot: Bot, file: VoiceFile, settings: AudioSettings, words: Words = ENGLISH
) -> PostAudio:
    """The voice note ``file``, downloaded within ``[audio] max_bytes``: Telegram's
    ``getFile`` is asked its size first, and nothing is downloaded past the cap.

    Raises:
        AudioRefusedError: it is larger than the cap (by ``getFile``'s size, Telegram's
            refusal of a file over 20 MB, or the bytes received).
        InvalidPostError: Telegram did not give it (said in ``words``, the chat's
            language).
    """
    refusal = partial(too_large, settings=settings)
    failed = words(NOT_DOWNLOADED)
    data = await download_file(bot, file.file_id, settings.max_bytes, refusal, failed)
    return PostAudio(data=data, media_type=file.media_type, duration_s=file.duration_s)
