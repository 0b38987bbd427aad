"""A post's voice note heard before it is checked: its caps kept from what was declared
and from its header before anything is sent, its words heard by the transcriber the
settings name, and the words put in the post's text under their marker, so that Stage 1
and every agent read them, and a repeat of the same voice note is a repeat of its words
(:func:`read_post`, the engine's reading of a post: heard, then its images read).
"""

from __future__ import annotations

import logging

from ..audio_settings import AudioSettings
from ..errors import InvalidPostError, ModelUnavailableError
from ..images.reader import ImageReader
from ..post import Post, ReadPost
from ..records.audio import Transcript
from ..refusals import POST_REFUSALS, PostRefusal
from ..text import clean_post
from .probe import AudioRefusedError, probe, refuse_declared
from .transcriber import Transcriber, TranscriptionFailedError

__all__ = [
    "HEARD_MARKER",
    "NO_WORDS",
    "VoiceReader",
    "read_post",
    "text_with_transcript",
    "transcriber_for",
]

log = logging.getLogger(__name__)

#: the line that opens the words heard in a voice note, in the post's text
HEARD_MARKER = "[Heard in the voice note]"
NO_WORDS = POST_REFUSALS[PostRefusal.NO_WORDS_HEARD]


def transcriber_for(settings: AudioSettings) -> Transcriber | None:
    """The transcriber ``[audio]`` names; ``None`` where voice notes are not transcribed."""
    if not settings.enabled or settings.backend == "none":
        return None
    if settings.backend == "openai":
        from .openai_transcriber import OpenAITranscriber

        return OpenAITranscriber.from_settings(settings)
    from .embedded import EmbeddedTranscriber

    return EmbeddedTranscriber(settings)


def text_with_transcript(caption: str, transcript: Transcript) -> str:
    """A post's text with its voice note's words: the caption (if any), then the words
    under :data:`HEARD_MARKER`."""
    heard = f"{HEARD_MARKER}\n{transcript.text}"
    return f"{caption.strip()}\n\n{heard}" if caption.strip() else heard


class VoiceReader:
    """Hears the voice notes of posts.

    Args:
        settings: the ``[audio]`` section.
        transcriber: the transcriber to use instead of the one the settings name (tests,
            benchmarks).
    """

    def __init__(self, settings: AudioSettings, *, transcriber: Transcriber | None = None) -> None:
        self.settings = settings
        self.transcriber = transcriber if transcriber is not None else transcriber_for(settings)

    def load(self) -> None:
        """Load the transcriber's model now (blocking); nothing for a server."""
        if self.transcriber is not None:
            self.transcriber.load()

    async def read(self, data: bytes, declared_s: float | None = None) -> Transcript:
        """The words heard in the voice note ``data`` (whose platform declared it
        ``declared_s`` long, if it said).

        Raises:
            AudioRefusedError: voice notes are not transcribed here, or the offline
                model is not installed (:data:`NEEDS_SERVER`); the file is over a cap,
                not an audio format transcribed, or damaged. Nothing was sent then.
            TranscriptionFailedError: the transcriber did not deliver (its ``detail`` is
                logged here).
            InvalidPostError: no words were heard; too many voice notes wait already, or
                it took too long (one sentence each).
        """
        if self.transcriber is None:
            raise AudioRefusedError(PostRefusal.VOICES_OFF)
        refuse_declared(None, declared_s, self.settings)
        audio = probe(data, self.settings)  # the caps, before anything is sent
        try:
            heard = await self.transcriber.transcribe(audio, self.settings.language)
        except TranscriptionFailedError as exc:
            log.warning("a voice note (%s) was not transcribed: %s", audio.sha256[:12], exc.detail)
            raise
        except ModelUnavailableError as exc:  # the offline model is not installed here
            log.error("voice notes cannot be transcribed offline: %s", exc)
            raise AudioRefusedError(PostRefusal.VOICE_NEEDS_SERVER) from None
        text = clean_post(heard.text)[0].strip()
        if not text:
            raise InvalidPostError(PostRefusal.NO_WORDS_HEARD)
        return Transcript(
            sha256=audio.sha256,
            bytes=len(audio.data),
            format=audio.format,
            duration_s=audio.duration_s,
            text=text,
            language=heard.language,
            transcriber=self.transcriber.name,
            ms=round(heard.ms, 1),
        )

    async def aclose(self) -> None:
        if self.transcriber is not None:
            await self.transcriber.aclose()


async def read_post(post: Post, images: ImageReader, voice: VoiceReader) -> ReadPost:
    """``post`` read: its voice note heard (its words after its caption, under
    :data:`HEARD_MARKER`), then its images read and its text cleaned
    (:meth:`ImageReader.read`). The post as read keeps no sound, only what was heard
    (``heard``); ``caption`` is false when the post had no text of its own.

    Raises:
        InvalidPostError: the voice note or an image is refused, or there is no text
            anywhere; the message is one sentence for the user.
    """
    if post.audio is None:
        return await images.read(post)
    transcript = await voice.read(post.audio.data, post.audio.duration_s)
    fields = {name: getattr(post, name) for name in Post.model_fields}
    # Validated again, so that the caption and the words heard keep the length cap.
    heard = Post.model_validate(
        {**fields, "text": text_with_transcript(post.text, transcript), "audio": None}
    )
    read = await images.read(heard)
    caption = bool(post.text.strip()) and read.caption
    return read.model_copy(update={"heard": transcript, "caption": caption})
