"""Voice notes heard by an OpenAI-compatible transcription server, against the fake one
(``tests/peers/servers/transcription_peer.py``, which checks the multipart request as
OpenAI's API does): what is sent, the retries, the caps kept before any request, and a
failing server answered with one sentence, the voice note kept to be sent again."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tests.peers.fixtures.audio import flac_header, voice
from tests.peers.servers.transcription_peer import FakeTranscription, TranscriptionReply

from zofia_engine.audio.openai_transcriber import OpenAITranscriber
from zofia_engine.audio.probe import UNREADABLE, AudioRefusedError
from zofia_engine.audio.reader import (
    HEARD_MARKER,
    NO_WORDS,
    VoiceReader,
    text_with_transcript,
    transcriber_for,
)
from zofia_engine.audio.transcriber import NOT_TRANSCRIBED, TranscriptionFailedError
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.config import EngineSettings, load_config
from zofia_engine.errors import ConfigError, InvalidPostError
from zofia_engine.retrieval.http import Pace

KEY = "sk-transcribe-test"
HEARD = "The mayor of Springfield signed a law banning cars."


@pytest_asyncio.fixture
async def server() -> AsyncIterator[FakeTranscription]:
    async with FakeTranscription(api_key=KEY) as peer:
        yield peer


def reader_for(
    server: FakeTranscription,
    *,
    retries: int = 2,
    timeout_s: float = 30.0,
    caps: dict[str, float] | None = None,
) -> VoiceReader:
    settings = AudioSettings.model_validate(
        {"backend": "openai", "base_url": server.base_url, "api_key": KEY, "retries": retries}
        | (caps or {})
    )
    transcriber = OpenAITranscriber(
        base_url=server.base_url,
        api_key=KEY,
        model=settings.model,
        pace=Pace(timeout_s=timeout_s, retries=retries, backoff_s=0.01, max_backoff_s=0.05),
    )
    return VoiceReader(settings, transcriber=transcriber)


async def test_the_voice_note_goes_as_the_api_takes_it_and_comes_back_as_a_transcript(
    server: FakeTranscription,
) -> None:
    data = voice("en.ogg")
    server.transcripts[hashlib.sha256(data).hexdigest()] = f"  {HEARD}\u200b "
    reader = reader_for(server)
    try:
        transcript = await reader.read(data)
    finally:
        await reader.aclose()
    [sent] = server.requests
    assert sent.headers["Authorization"] == f"Bearer {KEY}"
    assert sent.fields == {"model": "whisper-1", "response_format": "json"}  # no language set
    assert (sent.filename, sent.content_type, sent.data) == ("voice.ogg", "audio/ogg", data)
    assert transcript.text == HEARD  # cleaned: the spaces and the invisible character gone
    assert transcript.sha256 == hashlib.sha256(data).hexdigest() and transcript.bytes == len(data)
    assert (transcript.format, transcript.transcriber) == ("ogg", "openai:whisper-1")
    assert transcript.duration_s == pytest.approx(5.131, abs=0.01)
    assert transcript.language == ""  # the server did not say, and none was asked for
    assert text_with_transcript("Is this true?", transcript) == (
        f"Is this true?\n\n{HEARD_MARKER}\n{HEARD}"
    )
    assert text_with_transcript(" ", transcript) == f"{HEARD_MARKER}\n{HEARD}"


async def test_a_language_set_is_asked_for_and_one_the_server_names_is_kept(
    server: FakeTranscription,
) -> None:
    reader = reader_for(server)
    reader.settings = AudioSettings(backend="openai", base_url=server.base_url, language="pt")
    server.script(TranscriptionReply(text="O prefeito de São Paulo."))
    # The server names another language than the one asked for: its word is kept.
    server.script(TranscriptionReply(text="O prefeito de São Paulo.", language="ES"))
    try:
        asked = await reader.read(voice("pt.ogg"))
        named = await reader.read(voice("en.mp3"))
    finally:
        await reader.aclose()
    assert [r.fields.get("language") for r in server.requests] == ["pt", "pt"]
    assert server.requests[1].filename == "voice.mp3"
    assert server.requests[1].content_type == "audio/mpeg"
    assert (asked.language, named.language) == ("pt", "es")


async def test_a_server_error_is_retried_and_then_answered(server: FakeTranscription) -> None:
    server.script(
        TranscriptionReply(status=503, error="overloaded"),
        TranscriptionReply(status=429, error="slow down", headers={"Retry-After": "0"}),
        TranscriptionReply(text=HEARD),
    )
    reader = reader_for(server, retries=2)
    try:
        transcript = await reader.read(voice("en.m4a"))
    finally:
        await reader.aclose()
    assert transcript.text == HEARD
    assert len(server.requests) == 3
    assert {r.data for r in server.requests} == {voice("en.m4a")}  # the same file each time


async def test_a_failing_server_gives_one_sentence_and_the_voice_note_can_be_sent_again(
    server: FakeTranscription,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server.script(*[TranscriptionReply(status=500, error="boom")] * 3)
    reader = reader_for(server, retries=2)
    data = voice("en.ogg")
    try:
        with pytest.raises(TranscriptionFailedError) as failed:
            await reader.read(data)
        assert str(failed.value) == TranscriptionFailedError.SENTENCE
        assert "HTTP 500 after 3 attempts: boom" in failed.value.detail
        assert isinstance(failed.value, InvalidPostError)  # said to the reader as it is
        assert len(server.requests) == 3  # the first attempt and two retries, no more
        assert "HTTP 500 after 3 attempts" in caplog.text  # the detail is in the log
        # Nothing of it was kept: the same voice note, sent again, is heard.
        server.script(TranscriptionReply(text=HEARD))
        assert (await reader.read(data)).text == HEARD
    finally:
        await reader.aclose()
    assert [r.data for r in server.requests] == [data] * 4


async def test_a_refusal_of_the_request_as_configured_is_not_retried(
    server: FakeTranscription,
) -> None:
    three = Pace(retries=3)
    wrong_key = OpenAITranscriber(base_url=server.base_url, api_key="sk-wrong", pace=three)
    unknown = OpenAITranscriber(base_url=server.base_url, api_key=KEY, model="nope", pace=three)
    settings = AudioSettings(backend="openai", base_url=server.base_url)
    try:
        for transcriber, said in [(wrong_key, "HTTP 401"), (unknown, "HTTP 404")]:
            with pytest.raises(TranscriptionFailedError) as failed:
                await VoiceReader(settings, transcriber=transcriber).read(voice("en.ogg"))
            assert said in failed.value.detail
    finally:
        await wrong_key.aclose()
        await unknown.aclose()
    assert len(server.requests) == 2  # one each


async def test_a_spent_quota_fails_at_once(server: FakeTranscription) -> None:
    server.script(TranscriptionReply(status=429, error="quota", headers={"Retry-After": "3600"}))
    reader = reader_for(server, retries=3)
    try:
        with pytest.raises(TranscriptionFailedError) as failed:
            await reader.read(voice("en.ogg"))
    finally:
        await reader.aclose()
    assert "retry after 3600 s" in failed.value.detail
    assert len(server.requests) == 1


async def test_a_server_that_does_not_answer_in_time_is_given_up(
    server: FakeTranscription,
) -> None:
    server.script(*[TranscriptionReply(hang=True)] * 2)
    reader = reader_for(server, retries=1, timeout_s=0.2)
    try:
        with pytest.raises(TranscriptionFailedError) as failed:
            await reader.read(voice("en.ogg"))
    finally:
        await reader.aclose()
    assert "no answer within 0.2 s, 2 attempts" in failed.value.detail
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("data", "caps", "said"),
    [
        (flac_header(301), {}, "is 5 minutes 1 second long; voice notes up to 5 minutes"),
        (voice("en.ogg"), {"max_duration_s": 5}, "is 6 seconds long; voice notes up to 5 sec"),
        (voice("en.mp3"), {"max_bytes": 20_000}, "is 21 kB; voice notes up to 20 kB"),
        (b"GIF89a" + b"\0" * 100, {}, UNREADABLE),
    ],
)
async def test_past_the_caps_or_in_no_format_nothing_is_sent(
    server: FakeTranscription, data: bytes, caps: dict[str, float], said: str
) -> None:
    reader = reader_for(server, caps=caps)
    try:
        with pytest.raises(AudioRefusedError, match=said):
            await reader.read(data)
    finally:
        await reader.aclose()
    assert server.requests == []


async def test_no_words_heard_is_one_sentence(server: FakeTranscription) -> None:
    server.script(TranscriptionReply(text=" \n "))
    reader = reader_for(server)
    try:
        with pytest.raises(InvalidPostError) as refused:
            await reader.read(voice("en.ogg"))
    finally:
        await reader.aclose()
    assert str(refused.value) == NO_WORDS


async def test_where_voice_notes_are_not_transcribed_they_get_one_sentence() -> None:
    for settings in (AudioSettings(backend="none"), AudioSettings(enabled=False)):
        assert transcriber_for(settings) is None
        with pytest.raises(AudioRefusedError) as refused:
            await VoiceReader(settings).read(voice("en.ogg"))
        assert str(refused.value) == NOT_TRANSCRIBED


def test_the_settings_name_the_transcriber_and_refuse_openai_without_a_key() -> None:
    served = transcriber_for(AudioSettings(backend="openai", base_url="http://127.0.0.1:9/v1"))
    assert isinstance(served, OpenAITranscriber) and served.name == "openai:whisper-1"
    with pytest.raises(ConfigError, match=r"audio\.api_key is empty"):
        load_config(environ={"ZOFIA__AUDIO__BACKEND": "openai"})
    keyed: EngineSettings = load_config(
        environ={"ZOFIA__AUDIO__BACKEND": "openai", "ZOFIA__AUDIO__API_KEY": "k"}
    )
    assert keyed.audio.api_key == "k"
