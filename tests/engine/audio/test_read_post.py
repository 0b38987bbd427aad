"""A post's voice note read by the engine (:meth:`Engine.read`, :func:`read_post`): heard
by the fake OpenAI-compatible transcription server, its words the text checked (after the
caption, under their marker), what was heard kept on the read post and on the report, and
the card's line saying so; refused with one sentence, nothing sent, past the declared
duration, and where the offline model is missing."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tests.peers.fakes.fake_checker import scripted_report
from tests.peers.fixtures.audio import voice
from tests.peers.servers.transcription_peer import FakeTranscription

from bots.render.card_notes import read_line
from bots.render.words import words_for
from zofia_engine.audio.probe import AudioFile, AudioRefusedError
from zofia_engine.audio.reader import HEARD_MARKER, VoiceReader, read_post
from zofia_engine.audio.transcriber import NEEDS_SERVER, Heard
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.config import EngineSettings
from zofia_engine.engine import Engine
from zofia_engine.errors import ModelUnavailableError
from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.reader import ImageReader
from zofia_engine.post import Post, PostAudio

KEY = "sk-read-test"
HEARD = "The mayor of Springfield signed a law banning cars from the city centre on Sundays."


@pytest_asyncio.fixture
async def server() -> AsyncIterator[FakeTranscription]:
    async with FakeTranscription(api_key=KEY) as peer:
        yield peer


def audio_settings(server: FakeTranscription, **caps: float) -> AudioSettings:
    return AudioSettings(backend="openai", base_url=server.base_url, api_key=KEY, **caps)


async def test_the_engine_hears_a_voice_note_and_checks_its_words(
    server: FakeTranscription,
) -> None:
    data = voice("pt.ogg")
    server.transcripts[hashlib.sha256(data).hexdigest()] = HEARD
    settings = EngineSettings(audio=audio_settings(server), images=ImageSettings(ocr="none"))
    post = Post(text="Is this true?", audio=PostAudio(data=data, media_type="audio/ogg"))
    async with Engine(settings) as engine:
        read = await engine.read(post)
    assert read.text == f"Is this true?\n\n{HEARD_MARKER}\n{HEARD}"
    assert read.post.audio is None  # the sound is not kept past reading
    assert read.heard is not None and read.heard.text == HEARD and read.caption
    assert read.heard.sha256 == hashlib.sha256(data).hexdigest()
    report = scripted_report(read)  # the card's line is read from the typed field
    assert read_line(report) == f"Heard in the voice note: “{HEARD}”"
    assert read_line(report, words_for("Portuguese")).startswith("Ouvido no áudio: “The mayor")


async def test_a_voice_note_alone_is_all_heard(server: FakeTranscription) -> None:
    data = voice("en.m4a")
    server.transcripts[hashlib.sha256(data).hexdigest()] = "Cars are banned on Sundays."
    reader = VoiceReader(audio_settings(server))
    post = Post(text="", audio=PostAudio(data=data, media_type="audio/mp4", duration_s=5))
    try:
        read = await read_post(post, ImageReader(ImageSettings(ocr="none")), reader)
    finally:
        await reader.aclose()
    assert read.text == f"{HEARD_MARKER}\nCars are banned on Sundays." and not read.caption
    assert read.heard is not None and read.heard.format == "m4a"


async def test_a_declared_duration_past_the_cap_is_refused_before_anything_is_sent(
    server: FakeTranscription,
) -> None:
    reader = VoiceReader(audio_settings(server, max_duration_s=60))
    post = Post(text="", audio=PostAudio(data=voice("en.ogg"), duration_s=75))
    with pytest.raises(AudioRefusedError) as refused:
        await read_post(post, ImageReader(ImageSettings(ocr="none")), reader)
    await reader.aclose()
    assert str(refused.value) == (
        "The voice note is 1 minute 15 seconds long; voice notes up to 1 minute are transcribed."
    )
    assert server.requests == []


class _NotInstalled:
    """A transcriber whose model is not installed (the embedded one without the
    ``local`` extra): the port's in-process stand-in."""

    name = "embedded:whisper-base"

    def load(self) -> None:
        raise ModelUnavailableError("faster-whisper is not installed")

    async def transcribe(self, audio: AudioFile, language: str) -> Heard:
        raise ModelUnavailableError("faster-whisper is not installed")

    async def aclose(self) -> None:
        return None


async def test_without_the_offline_model_a_voice_note_gets_one_sentence() -> None:
    reader = VoiceReader(AudioSettings(), transcriber=_NotInstalled())
    post = Post(text="", audio=PostAudio(data=voice("en.ogg")))
    with pytest.raises(AudioRefusedError) as refused:
        await read_post(post, ImageReader(ImageSettings(ocr="none")), reader)
    assert str(refused.value) == NEEDS_SERVER
    assert NEEDS_SERVER.count(".") == 1 and "transcription server" in NEEDS_SERVER
