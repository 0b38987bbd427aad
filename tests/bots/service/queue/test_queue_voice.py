"""A voice note checked in the queued mode keeps what was heard: the bot's replica hears
it (the service reads a post once, where it is taken), queues the check, and the
Procrastinate worker, which never sees the sound, still reports ``heard``, so that the
card says "Heard in the voice note". The transcriber is the engine's real reader against
the fake transcription server; the check is the FakeChecker's."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from tests.bots.service.queue.test_queue import asker, replica, settings_for, worker
from tests.bots.telegram.test_telegram_voice import HEARD
from tests.peers.fakes.fake_checker import FakeChecker
from tests.peers.fixtures.audio import voice
from tests.peers.servers.transcription_peer import FakeTranscription

from bots.chat.check_flow import card_for
from bots.service.records import Fetched, Message, Outcome
from zofia_engine.audio.reader import VoiceReader
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.post import PostAudio

pytestmark = pytest.mark.slow  # a real PostgreSQL server on loopback

KEY = "sk-voice-test"


async def test_a_queued_voice_notes_report_and_card_keep_what_was_heard(
    postgres_url: str,
) -> None:
    settings = settings_for(postgres_url)
    data = voice("en.ogg")
    async with FakeTranscription(api_key=KEY) as transcription:
        transcription.transcripts[hashlib.sha256(data).hexdigest()] = HEARD
        audio = {"backend": "openai", "base_url": transcription.base_url, "api_key": KEY}
        checker = FakeChecker(voice=VoiceReader(AudioSettings.model_validate(audio)))

        async def fetch() -> Fetched:
            return Fetched(audio=PostAudio(data=data, media_type="audio/ogg"))

        try:
            async with replica(settings, checker) as service:
                message = Message("", fetch=fetch)
                async with (
                    service.take(message, asker(1)) as handle,
                    worker(settings, checker) as runner,
                ):
                    outcome = await asyncio.wait_for(handle.result(), 30)
                assert runner.runs == 1
                stored = service.store.reports.get(handle.check_id)
        finally:
            await checker.voice.aclose()
    assert len(transcription.requests) == 1  # heard once, by the replica that took it
    assert isinstance(outcome, Outcome) and outcome.report.heard is not None
    assert outcome.report.heard.text == HEARD
    assert stored is not None and stored.heard == outcome.report.heard
    assert checker.runs[0].text.endswith(HEARD)
    card = card_for(outcome, {})
    assert card.read.startswith("Heard in the voice note: “The mayor of Springfield")
