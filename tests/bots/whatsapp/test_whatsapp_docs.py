"""docs/whatsapp.md's transcript of a session, made here through the fake Cloud API
(``tests.peers.servers.whatsapp_peer``) and the real tipline and check service, with the
FakeChecker in place of the engine (the report's words are its script's). The check ids
are fixed afterwards so that the transcript is the same on every run. It sits between
``<!-- whatsapp:transcript -->`` and ``<!-- /whatsapp -->``;
``ZOFIA_WRITE_DOCS=1 .venv/bin/pytest tests/bots/whatsapp/test_whatsapp_docs.py``
rewrites it instead of comparing (read the diff before committing it), as
tests/bots/api/test_api_docs.py does for docs/api.md."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

from tests.bots.telegram.test_telegram_voice import HEARD
from tests.peers.fakes.fake_checker import FakeChecker, review_as
from tests.peers.fixtures.audio import voice
from tests.peers.fixtures.whatsapp_setup import ANN, REVIEWER, running_tipline
from tests.peers.servers.transcription_peer import FakeTranscription

from bots.service import corrections
from zofia_engine.audio.reader import VoiceReader
from zofia_engine.audio_settings import AudioSettings

PAGE = Path(__file__).resolve().parents[3] / "docs" / "whatsapp.md"
WRITE = os.environ.get("ZOFIA_WRITE_DOCS") == "1"
VOICE_KEY = "sk-voice-test"
POST = "The mayor of Springfield has banned bicycles from every street in the city."
SUMMARY = "The council's minutes of 12 March record no vote on bicycles or fines."
_BLOCK = re.compile(r"(<!-- whatsapp:transcript -->\n)(.*?)(<!-- /whatsapp -->)", re.DOTALL)


async def _session(tmp_path: Path, transcription: FakeTranscription, reader: VoiceReader) -> str:
    voice_note = voice("en.ogg")
    transcription.transcripts[hashlib.sha256(voice_note).hexdigest()] = HEARD
    checker = FakeChecker(summary=SUMMARY, voice=reader)
    site = "https://zofia.example.org"
    async with running_tipline(tmp_path, checker, public_url=site) as run:
        cloud = run.cloud
        cloud.names = {ANN: "Ann", REVIEWER: "Reviewer"}
        await cloud.text(ANN, POST, forwarded=True)
        card = await run.card(ANN)
        check_id = card.buttons[0][0].rpartition(":")[2]
        debate = next(i for i, title in card.buttons if title == "Debate")
        pressed = await cloud.press(ANN, card, debate)
        await cloud.wait_for(lambda: any(s.reply_to == pressed for s in cloud.to(ANN)))
        asked = await cloud.text(ANN, "Which source says so?", reply_to=card.id)
        await cloud.wait_for(lambda: any(s.reply_to == asked for s in cloud.to(ANN)))
        await cloud.audio(ANN, voice_note)
        heard = (await run.card(ANN, 2)).buttons[0][0].rpartition(":")[2]
        cloud.transcript.append("(the operator reviews the check: `zofia review`)")
        await review_as(run.service, check_id, ("cli", "operator"), "misleading", "Old photo.")
        await run.card(ANN, 3)
        cloud.clock.advance(hours=25)
        cloud.transcript.append("(25 hours later, the operator reviews it again)")
        await review_as(run.service, check_id, ("cli", "operator"), "true")
        await cloud.wait_for(lambda: any(s.type == "template" for s in cloud.to(ANN)))
        transcript = "\n".join(cloud.transcript)
    return transcript.replace(check_id, "Zq3mP8xK2vLwT0aB").replace(heard, "Vn7cH2sD9kQwR4tY")


async def test_the_transcript_in_the_docs_is_what_the_fake_cloud_api_saw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corrections, "POLL_S", 0.05)
    async with FakeTranscription(api_key=VOICE_KEY) as transcription:
        audio = {"backend": "openai", "base_url": transcription.base_url, "api_key": VOICE_KEY}
        reader = VoiceReader(AudioSettings.model_validate(audio))
        try:
            transcript = await _session(tmp_path, transcription, reader)
        finally:
            await reader.aclose()
    block = f"```text\n{transcript}\n```\n"
    text = PAGE.read_text(encoding="utf-8")
    found = _BLOCK.search(text)
    assert found is not None, "docs/whatsapp.md has no <!-- whatsapp:transcript --> block"
    if WRITE:
        PAGE.write_text(text[: found.start(2)] + block + text[found.end(2) :], encoding="utf-8")
        pytest.skip("rewrote docs/whatsapp.md: run again without ZOFIA_WRITE_DOCS to compare")
    assert found[2] == block, (
        "docs/whatsapp.md's transcript is not what the tipline does now; "
        "ZOFIA_WRITE_DOCS=1 .venv/bin/pytest tests/bots/whatsapp/test_whatsapp_docs.py rewrites it"
    )
