"""An audio file's format and declared duration, read from its header with mutagen before
anything is transcribed, and the refusals of a voice note past the caps, one sentence each.

The platforms declare a voice note's size and duration before it is downloaded (Telegram's
``voice.file_size`` and ``voice.duration``; WhatsApp's media ``file_size``):
:func:`refuse_declared` refuses from those. Once the bytes are here, :func:`probe` reads
what the file itself declares: the last granule of an OGG stream (Opus or Vorbis, the
voice notes of Telegram and WhatsApp), the Xing header or the frames of an MP3, the
movie header of an M4A, the data chunk of a WAV, the stream info of a FLAC. A file whose
header lies about its duration is cut at the cap where the engine transcribes it itself
(:mod:`.embedded`); a server's own limits hold for the rest, and the size cap for both.
"""

from __future__ import annotations

import hashlib
import io
import math
from dataclasses import dataclass

import mutagen
from mutagen.flac import FLAC
from mutagen.mp3 import MP3
from mutagen.mp4 import MP4
from mutagen.oggopus import OggOpus
from mutagen.oggvorbis import OggVorbis
from mutagen.wave import WAVE

from ..audio_settings import AudioSettings
from ..errors import InvalidPostError
from ..records.audio import AUDIO_FORMATS
from ..refusals import POST_REFUSALS, PostRefusal, duration_words

__all__ = [
    "DAMAGED",
    "UNREADABLE",
    "AudioFile",
    "AudioRefusedError",
    "duration_words",
    "probe",
    "refuse_declared",
    "sniff",
    "too_large",
    "too_long",
]

UNREADABLE = POST_REFUSALS[PostRefusal.VOICE_UNREADABLE]
DAMAGED = POST_REFUSALS[PostRefusal.VOICE_DAMAGED]

# The classes that read each format's header, tried in order.
_READERS: dict[str, tuple[type[mutagen.FileType], ...]] = {
    "ogg": (OggOpus, OggVorbis),
    "mp3": (MP3,),
    "m4a": (MP4,),
    "wav": (WAVE,),
    "flac": (FLAC,),
}


class AudioRefusedError(InvalidPostError):
    """A voice note or audio file that is not transcribed; the message is one sentence
    for the user."""


@dataclass(frozen=True)
class AudioFile:
    """An audio file as it is sent to a transcriber: its bytes as received, its format
    (a key of :data:`~zofia_engine.records.audio.AUDIO_FORMATS`), the duration its header
    declares and its SHA-256."""

    data: bytes
    format: str
    duration_s: float
    sha256: str

    @property
    def media_type(self) -> str:
        return AUDIO_FORMATS[self.format]

    @property
    def filename(self) -> str:
        """The name it is uploaded under: servers tell the format by its extension."""
        return f"voice.{self.format}"


def too_large(size: int, settings: AudioSettings) -> AudioRefusedError:
    """The refusal of a voice note of ``size`` bytes (a :class:`~..refusals.SizeOver` if
    only a bound is known), over ``max_bytes``."""
    return AudioRefusedError(PostRefusal.VOICE_TOO_LARGE, size=size, max_size=settings.max_bytes)


def too_long(seconds: float, settings: AudioSettings) -> AudioRefusedError:
    """The refusal of a voice note of ``seconds``, over ``max_duration_s``."""
    return AudioRefusedError(
        PostRefusal.VOICE_TOO_LONG, duration=seconds, max_duration=settings.max_duration_s
    )


def refuse_declared(size: int | None, duration_s: float | None, settings: AudioSettings) -> None:
    """Refuse, from what the platform declares before a download, a voice note the
    engine would refuse anyway (``None``: not declared).

    Raises:
        AudioRefusedError: over ``max_bytes`` or ``max_duration_s``.
    """
    if size is not None and size > settings.max_bytes:
        raise too_large(size, settings)
    if duration_s is not None and duration_s > settings.max_duration_s:
        raise too_long(duration_s, settings)


def sniff(data: bytes) -> str | None:
    """The format ``data`` starts like (a key of ``AUDIO_FORMATS``), or ``None``."""
    if data.startswith(b"OggS"):
        return "ogg"
    if data.startswith(b"RIFF") and data[8:12] == b"WAVE":
        return "wav"
    if data.startswith(b"fLaC"):
        return "flac"
    if data[4:8] == b"ftyp":
        return "m4a"
    if data.startswith(b"ID3") or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0):
        return "mp3"
    return None


def _declared_duration(data: bytes, fmt: str) -> float:
    for reader in _READERS[fmt]:
        try:
            length = getattr(reader(io.BytesIO(data)).info, "length", None)
        except (mutagen.MutagenError, ValueError, IndexError, EOFError, OverflowError):
            continue
        if isinstance(length, int | float) and math.isfinite(length) and length > 0:
            return float(length)
    raise AudioRefusedError(PostRefusal.VOICE_DAMAGED)


def probe(data: bytes, settings: AudioSettings) -> AudioFile:
    """``data`` as an :class:`AudioFile`, within the caps.

    Raises:
        AudioRefusedError: over ``max_bytes``; not one of the formats transcribed; a
            header that cannot be read or declares no duration (damaged, cut short);
            over ``max_duration_s``.
    """
    if len(data) > settings.max_bytes:
        raise too_large(len(data), settings)
    fmt = sniff(data)
    if fmt is None:
        raise AudioRefusedError(PostRefusal.VOICE_UNREADABLE)
    duration = _declared_duration(data, fmt)
    if duration > settings.max_duration_s:
        raise too_long(duration, settings)
    return AudioFile(data, fmt, round(duration, 3), hashlib.sha256(data).hexdigest())
