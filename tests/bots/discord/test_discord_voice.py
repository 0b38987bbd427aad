"""Voice messages on Discord, end to end: the real discord.py client against the fake
Discord (REST, gateway and its CDN on loopback), the real check service on a tmp SQLite
file, and a :class:`FakeChecker` whose reading of a post is the engine's, its voice notes
heard by the fake OpenAI-compatible transcription server; only the verdict is scripted.
The "Fact-check" message command checks a voice message's words, and refuses one past
the ``[audio]`` caps from what Discord declares (``size``, ``duration_secs``) with one
sentence and nothing downloaded."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yarl

from tests.bots.discord.test_discord_images import _verdict
from tests.peers.fakes.fake_checker import FakeChecker, fake_service
from tests.peers.fixtures.audio import voice
from tests.peers.servers.discord_peer import Call, FakeDiscord, running_client
from tests.peers.servers.transcription_peer import FakeTranscription

from bots.app.settings import Settings
from bots.discord.client import FactCheckBot
from bots.discord.voice import NOT_DOWNLOADED
from bots.render.words import words_for
from zofia_engine.audio.reader import HEARD_MARKER, VoiceReader
from zofia_engine.audio_settings import AudioSettings

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]
GENEROUS = {"user_per_minute": 100, "chat_per_minute": 100, "user_daily": 1000}
KEY = "sk-discord-voice"
HEARD = "The mayor of Springfield signed a law banning cars from the city centre on Sundays."
NEWSFAN = 910000000000000001
StartBot = Callable[[], contextlib.AbstractAsyncContextManager[FactCheckBot]]


@pytest_asyncio.fixture
async def transcription() -> AsyncIterator[FakeTranscription]:
    async with FakeTranscription(api_key=KEY) as peer:
        yield peer


@pytest_asyncio.fixture
async def checker(transcription: FakeTranscription) -> AsyncIterator[FakeChecker]:
    audio = AudioSettings(
        backend="openai",
        base_url=transcription.base_url,
        api_key=KEY,
        max_bytes=1_000_000,
        max_duration_s=60,
    )
    made = FakeChecker(voice=VoiceReader(audio))
    yield made
    await made.voice.aclose()


@pytest_asyncio.fixture
async def start_bot(checker: FakeChecker, tmp_path: Path) -> AsyncIterator[StartBot]:
    @contextlib.asynccontextmanager
    async def start() -> AsyncIterator[FactCheckBot]:
        settings = Settings.model_validate(
            {
                "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
                "service": GENEROUS,
                "discord": {"progress_interval_s": 0, "guild_cooldown_s": 0},
            }
        )
        async with (
            fake_service(settings, checker) as running,
            running_client(
                FactCheckBot(settings.discord, running, audio=checker.voice.settings)
            ) as started,
        ):
            yield started

    yield start


async def _said(peer: FakeDiscord, payload: dict[str, Any]) -> str:
    """Send a command; the last word of its deferred answer, progress aside."""
    await peer.dispatch("INTERACTION_CREATE", payload)

    def said(call: Call) -> str:
        if f"/{payload['token']}" not in call.path:
            return ""
        content = str((call.body or {}).get("content") or "")
        return "" if content.startswith("⏳") else content

    call = await peer.wait_for(lambda c: bool(said(c)), timeout=60)
    return said(call)


def _voice_message(peer: FakeDiscord, data: bytes, **declared: Any) -> dict[str, Any]:
    note = peer.attachment(data, "voice-message.ogg", content_type="audio/ogg", **declared)
    return peer.message("", author=peer.user(NEWSFAN, "newsfan"), attachments=[note])


async def test_a_voice_message_is_heard_and_its_words_checked(
    discord_api: FakeDiscord,
    transcription: FakeTranscription,
    checker: FakeChecker,
    start_bot: StartBot,
) -> None:
    data = voice("en.ogg")
    transcription.transcripts[hashlib.sha256(data).hexdigest()] = HEARD
    target = _voice_message(discord_api, data, duration_secs=5.13)
    async with start_bot():
        embed = await _verdict(discord_api, discord_api.message_command("Fact-check", target))
    fields = {field["name"]: field["value"] for field in embed["fields"]}
    assert fields["Checked"] == f"Heard in the voice note: “{HEARD}”"
    [read] = checker.reads
    assert read.text == f"{HEARD_MARKER}\n{HEARD}" and read.heard is not None
    assert read.heard.duration_s > 5  # read from the file's header, not Discord's word
    [sent] = transcription.requests
    assert sent.data == data
    assert discord_api.downloads == [yarl.URL(target["attachments"][0]["url"]).path]


async def test_a_voice_message_past_the_caps_is_refused_undownloaded(
    discord_api: FakeDiscord,
    transcription: FakeTranscription,
    checker: FakeChecker,
    start_bot: StartBot,
) -> None:
    data = voice("en.ogg")
    too_long = _voice_message(discord_api, data, duration_secs=90.0)
    too_large = _voice_message(discord_api, data, duration_secs=5.0, size=2_500_000)
    async with start_bot():
        long_said = await _said(discord_api, discord_api.message_command("Fact-check", too_long))
        large_said = await _said(discord_api, discord_api.message_command("Fact-check", too_large))
    assert long_said == (
        "The voice note is 1 minute 30 seconds long; voice notes up to 1 minute are transcribed."
    )
    assert large_said == "The voice note is 2 MB; voice notes up to 1 MB are transcribed."
    assert discord_api.downloads == [] and transcription.requests == [] and checker.reads == []


@pytest.mark.parametrize(("locale", "language"), [("en-US", "English"), ("fr", "French")])
async def test_a_voice_message_gone_from_the_cdn_gets_one_sentence_in_the_askers_language(
    discord_api: FakeDiscord,
    transcription: FakeTranscription,
    checker: FakeChecker,
    start_bot: StartBot,
    locale: str,
    language: str,
) -> None:
    expired = _voice_message(discord_api, voice("en.ogg"), duration_secs=5.0)
    discord_api.files.clear()  # the CDN answers 404, as for a deleted or expired file
    payload = discord_api.message_command("Fact-check", expired)
    payload["locale"] = locale  # a server that set no language: the asker's client's
    async with start_bot():
        said = await _said(discord_api, payload)
    assert said == words_for(language)(NOT_DOWNLOADED)
    if language == "French":
        assert said.startswith("Je n'ai pas pu télécharger le message vocal depuis Discord")
    assert discord_api.downloads == [yarl.URL(expired["attachments"][0]["url"]).path]
    assert transcription.requests == [] and checker.reads == []
