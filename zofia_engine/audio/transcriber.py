"""What a transcriber is to the reader: an audio file in, the words heard out; and the
one sentence a reader gets when no transcriber could hear them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..errors import InvalidPostError
from ..refusals import POST_REFUSALS, PostRefusal
from .probe import AudioFile

__all__ = [
    "NEEDS_SERVER",
    "NOT_TRANSCRIBED",
    "Heard",
    "Transcriber",
    "TranscriptionFailedError",
    "iso_language",
]

#: what a voice note gets where voice notes are not transcribed (``[audio] backend = "none"``)
NOT_TRANSCRIBED = POST_REFUSALS[PostRefusal.VOICES_OFF]
#: what a voice note gets where the offline model is not installed (``embedded`` without
#: the ``local`` extra): voice notes then need a transcription server
NEEDS_SERVER = POST_REFUSALS[PostRefusal.VOICE_NEEDS_SERVER]


class TranscriptionFailedError(InvalidPostError):
    """The transcriber did not deliver (a server down, refusing, or too slow); the
    message is one sentence for the user, ``detail`` what failed, for the log. The voice
    note is not lost: nothing was recorded of it, and it may be sent again as it is."""

    SENTENCE = POST_REFUSALS[PostRefusal.VOICE_NOT_TRANSCRIBED]

    def __init__(self, detail: str) -> None:
        super().__init__(PostRefusal.VOICE_NOT_TRANSCRIBED)
        self.detail = detail


@dataclass(frozen=True)
class Heard:
    """What a transcriber heard: the words as it wrote them, the language it heard
    (ISO 639-1, ``""`` when it did not say) and the milliseconds it took."""

    text: str
    language: str
    ms: float


class Transcriber(Protocol):
    """Hears the words in an audio file. ``name`` says which, for the report
    (``"embedded:whisper-base"``, ``"openai:whisper-1"``)."""

    name: str

    def load(self) -> None:
        """Load what the first file would wait for (blocking); nothing for a server."""
        ...

    async def transcribe(self, audio: AudioFile, language: str) -> Heard:
        """The words in ``audio``, heard as ``language`` (ISO 639-1; ``""``: found out).

        Raises:
            TranscriptionFailedError: the transcriber did not deliver.
            AudioRefusedError: the file cannot be decoded.
        """
        ...

    async def aclose(self) -> None: ...


def iso_language(value: object) -> str:
    """An ISO 639-1 code from what a transcriber said (``"pt"``, ``"PT"``), ``""`` for
    anything else (a name such as ``"portuguese"``, which some servers write)."""
    if isinstance(value, str) and len(value.strip()) == 2 and value.strip().isalpha():
        return value.strip().lower()
    return ""
