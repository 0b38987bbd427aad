"""A voice note's check resumed from the store keeps what was heard: the service that
took it hears it once, stops while the check runs (as a restart does), and the next
service on the store runs it again from its stored text, with its transcript, so that
its report says what was heard. The queued mode's worker reads it the same way
(tests/bots/service/queue/test_queue_voice.py)."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from tests.bots.telegram.test_telegram_voice import HEARD
from tests.peers.fakes.fake_checker import FakeChecker, Gate, fake_service
from tests.peers.fixtures.audio import voice
from tests.peers.servers.transcription_peer import FakeTranscription

from bots.app.settings import Settings
from bots.service.records import Fetched, Message, Requester
from zofia_engine.audio.reader import VoiceReader
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.post import PostAudio

KEY = "sk-voice-test"
ASKER = Requester("test", "user-1", "chat-1")


async def test_a_resumed_voice_note_check_reports_what_was_heard(tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {"storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"}}
    )
    data = voice("en.ogg")

    async def fetch() -> Fetched:
        return Fetched(audio=PostAudio(data=data, media_type="audio/ogg"))

    async with FakeTranscription(api_key=KEY) as transcription:
        transcription.transcripts[hashlib.sha256(data).hexdigest()] = HEARD
        audio = {"backend": "openai", "base_url": transcription.base_url, "api_key": KEY}
        gate = Gate()
        first = FakeChecker(gate=gate, voice=VoiceReader(AudioSettings.model_validate(audio)))
        try:
            async with fake_service(settings, first) as service:
                async with service.take(Message("", fetch=fetch), ASKER) as handle:
                    await gate.held()
                check_id = handle.check_id
        finally:
            await first.voice.aclose()
    again = FakeChecker()  # hears nothing: the sound is gone, only the text is stored
    async with fake_service(settings, again) as service:
        resumed = service.handle(check_id)
        assert resumed is not None
        outcome = await asyncio.wait_for(resumed.result(), 30)
    assert len(transcription.requests) == 1 and len(again.runs) == 1
    assert again.runs[0].text.endswith(HEARD)
    assert outcome.report.heard is not None and outcome.report.heard.text == HEARD
    assert outcome.report.caption is False  # the post had no text of its own
