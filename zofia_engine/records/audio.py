"""What a check heard in a voice note, as the report keeps it: never the sound, only its
hash, size, format and duration, the words heard and who heard them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["AUDIO_FORMATS", "Transcript"]

#: The formats transcribed, each by its file extension → the media type it is sent as.
#: Every OpenAI-compatible transcription server takes these extensions.
AUDIO_FORMATS = {
    "ogg": "audio/ogg",
    "mp3": "audio/mpeg",
    "m4a": "audio/mp4",
    "wav": "audio/wav",
    "flac": "audio/flac",
}


class Transcript(BaseModel):
    """A voice note or audio file of a post, transcribed: its SHA-256 and size as
    received, its format (a key of :data:`AUDIO_FORMATS`) and the duration its header
    declares, the words heard (``text``, cleaned), the language the transcriber heard
    (ISO 639-1, ``""`` when it did not say), which transcriber heard it
    (``"embedded:whisper-base"``, ``"openai:whisper-1"``) and the milliseconds it took."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: str
    bytes: int
    format: str
    duration_s: float
    text: str
    language: str = ""
    transcriber: str = ""
    ms: float = 0.0
