"""Voice notes and audio files in chat messages, the rules every front-end shares: which
attachments are audio, and the refusals that need no download (a voice note that
declares itself too large or too long), in the engine's own sentences and caps
(``[audio]``). The bots take these rules from here, never from the engine's probe.

The engine decides what the bytes are: it refuses a file in no format it transcribes, a
damaged one or one whose header declares more than the caps with one sentence of its own.
"""

from __future__ import annotations

from zofia_engine.audio.probe import AudioRefusedError, refuse_declared, too_large
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.post import PostAudio

__all__ = [
    "AUDIO_SUFFIXES",
    "AudioRefusedError",
    "AudioSettings",
    "PostAudio",
    "looks_like_audio",
    "refuse_declared",
    "too_large",
]

#: names a file may have to be taken for audio whatever its declared media type
AUDIO_SUFFIXES = (".ogg", ".oga", ".opus", ".mp3", ".m4a", ".wav", ".flac")


def looks_like_audio(media_type: str | None, filename: str | None) -> bool:
    """A file sent as ``audio/*`` or named like an audio file."""
    kind = (media_type or "").split(";")[0].strip().lower()
    return kind.startswith("audio/") or (filename or "").lower().endswith(AUDIO_SUFFIXES)
