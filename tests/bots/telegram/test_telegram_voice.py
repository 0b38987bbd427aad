"""Voice notes on Telegram end to end: the real python-telegram-bot client polling a fake
Bot API on loopback (``getFile`` and file downloads included), the real check service on
a SQLite file, and a :class:`FakeChecker` whose reading of a post is the engine's
(:func:`~zofia_engine.audio.reader.read_post`), its voice notes heard by the fake
OpenAI-compatible transcription server: what a voice note becomes is real (caps, header,
the request, the words in the post), only the verdict is scripted.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.peers.fakes.fake_checker import FakeChecker
from tests.peers.fixtures.audio import voice
from tests.peers.fixtures.telegram_setup import fake_bot, telegram_settings
from tests.peers.servers.telegram_peer import FakeBotAPI, group, user
from tests.peers.servers.transcription_peer import FakeTranscription

from bots.render.words import words_for
from bots.service.checks import CheckService
from bots.telegram.check_flow import LISTENING
from bots.telegram.voice import NOT_DOWNLOADED
from zofia_engine.audio.reader import HEARD_MARKER, VoiceReader
from zofia_engine.audio_settings import AudioSettings

ANN = user(611, "Ann", "ann_v")
CHAT = {"id": ANN["id"], "type": "private", "first_name": "Ann"}
GROUP = group(-100411, "Voice club")
KEY = "sk-voice-test"
HEARD = "The mayor of Springfield signed a law banning cars from the city centre on Sundays."
#: the caps the bot and the engine keep here: 1 MB and one minute
CAPS = {"max_bytes": 1_000_000, "max_duration_s": 60.0}


@dataclass
class Bot:
    peer: FakeBotAPI
    transcription: FakeTranscription
    checker: FakeChecker
    service: CheckService

    def checks(self) -> list[Any]:
        return [row for row, _ in self.service.store.checks.history(limit=50)]


@pytest_asyncio.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    async with FakeBotAPI() as peer, FakeTranscription(api_key=KEY) as transcription:
        audio = {"backend": "openai", "base_url": transcription.base_url, "api_key": KEY, **CAPS}
        settings = telegram_settings(peer, tmp_path, audio=audio)
        checker = FakeChecker(voice=VoiceReader(AudioSettings.model_validate(audio)))
        try:
            async with fake_bot(settings, checker) as service:
                yield Bot(peer, transcription, checker, service)
        finally:
            await checker.voice.aclose()


def _is_card(message: dict[str, Any]) -> bool:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return any(b.get("callback_data", "").startswith("d:") for row in rows for b in row)


async def wait_card(peer: FakeBotAPI, chat_id: int) -> dict[str, Any]:
    def card() -> dict[str, Any] | None:
        return next((m for m in peer.bot_messages(chat_id) if _is_card(m)), None)

    found: dict[str, Any] = await peer.wait_for(card, 60)
    return found


async def wait_said(peer: FakeBotAPI, chat_id: int) -> dict[str, Any]:
    found: dict[str, Any] = (await peer.wait_for(lambda: peer.bot_messages(chat_id), 30))[0]
    return found


async def test_a_forwarded_voice_note_is_heard_and_its_words_checked(bot: Bot) -> None:
    data = voice("en.ogg")
    bot.transcription.transcripts[hashlib.sha256(data).hexdigest()] = HEARD
    bot.peer.send(CHAT, ANN, voice=bot.peer.voice(data, duration=5))

    card = await wait_card(bot.peer, CHAT["id"])
    assert f"Heard in the voice note: “{HEARD[:60]}" in card["text"]
    # Answered at once, before the download: that reply became the progress, then the card.
    first = bot.peer.sent("sendMessage", CHAT["id"])[0]
    assert first.params["text"] == LISTENING
    assert [m["message_id"] for m in bot.peer.bot_messages(CHAT["id"])] == [card["message_id"]]
    [sent] = bot.transcription.requests  # the bytes Telegram served, as OpenAI takes them
    assert (sent.filename, sent.content_type, sent.data) == ("voice.ogg", "audio/ogg", data)
    [read] = bot.checker.reads
    assert read.post.text == f"{HEARD_MARKER}\n{HEARD}" and read.post.audio is None
    assert read.heard is not None and read.heard.transcriber == "openai:whisper-1"
    assert read.caption is False
    [row] = bot.checks()
    assert row.status == "done"


async def test_an_audio_file_with_a_caption_is_checked_with_its_caption(bot: Bot) -> None:
    data = voice("en.mp3")
    bot.transcription.transcripts[hashlib.sha256(data).hexdigest()] = HEARD
    audio = bot.peer.audio(data, duration=5, file_name="mayor.mp3", mime_type="audio/mpeg")
    bot.peer.send(CHAT, ANN, caption="Is this true?", audio=audio)

    card = await wait_card(bot.peer, CHAT["id"])
    assert "Heard in the voice note:" in card["text"]
    [read] = bot.checker.reads
    assert read.post.text == f"Is this true?\n\n{HEARD_MARKER}\n{HEARD}" and read.caption


async def test_a_voice_note_declared_past_the_size_cap_is_refused_unfetched(bot: Bot) -> None:
    data = voice("en.ogg")
    bot.peer.send(CHAT, ANN, voice=bot.peer.voice(data, duration=5, file_size=3_000_000))

    said = await wait_said(bot.peer, CHAT["id"])
    assert said["text"] == "The voice note is 3 MB; voice notes up to 1 MB are transcribed."
    assert bot.peer.sent("getFile") == [] and bot.peer.downloads == []
    assert bot.transcription.requests == [] and bot.checks() == []


async def test_a_voice_note_declared_past_the_duration_cap_is_refused_unfetched(
    bot: Bot,
) -> None:
    data = voice("en.ogg")
    bot.peer.send(CHAT, ANN, voice=bot.peer.voice(data, duration=61))

    said = await wait_said(bot.peer, CHAT["id"])
    assert said["text"] == (
        "The voice note is 1 minute 1 second long; voice notes up to 1 minute are transcribed."
    )
    assert bot.peer.sent("getFile") == [] and bot.peer.downloads == []
    assert bot.transcription.requests == [] and bot.checks() == []


async def test_a_voice_note_over_telegrams_download_limit_is_refused_in_one_sentence(
    tmp_path: Path,
) -> None:
    """A voice note that declared no size, and that ``getFile`` refuses (over 20 MB for
    a bot): one sentence, nothing downloaded or sent."""
    async with FakeBotAPI() as peer, FakeTranscription(api_key=KEY) as transcription:
        caps = {"max_bytes": 30_000_000, "max_duration_s": 600.0}
        audio = {"backend": "openai", "base_url": transcription.base_url, "api_key": KEY, **caps}
        checker = FakeChecker(voice=VoiceReader(AudioSettings.model_validate(audio)))
        async with fake_bot(telegram_settings(peer, tmp_path, audio=audio), checker):
            note = peer.voice(voice("en.ogg"), duration=5, file_size=25_000_000)
            peer.send(CHAT, ANN, voice={k: v for k, v in note.items() if k != "file_size"})
            said = await wait_said(peer, CHAT["id"])
        await checker.voice.aclose()
    assert said["text"] == (
        "The voice note is over 20 MB; voice notes up to 30 MB are transcribed."
    )
    [asked] = [call for call in peer.calls if call.method == "getFile"]
    assert asked.error == "Bad Request: file is too big" and peer.downloads == []
    assert transcription.requests == []


async def test_an_unasked_voice_note_past_a_cap_in_a_group_says_nothing(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    """A group's auto-check of a forwarded voice note too long to hear stays quiet, as it
    does for an image it cannot read: logged, nothing said, nothing fetched."""
    caplog.set_level(logging.INFO, logger="bots.chat.check_flow")
    await bot.service.chats.set_settings("telegram", str(GROUP["id"]), {"auto_check": True})
    origin = {"type": "hidden_user", "sender_user_name": "Someone", "date": 1_700_000_000}
    note = bot.peer.voice(voice("en.ogg"), duration=600)
    bot.peer.send(GROUP, ANN, voice=note, forward_origin=origin)

    def quiet() -> bool:
        return any("not checked" in r.getMessage() for r in caplog.records)

    await bot.peer.wait_for(quiet)
    assert bot.peer.bot_messages(GROUP["id"]) == [] and bot.peer.downloads == []
    assert bot.checks() == []


async def test_a_voice_note_telegram_does_not_give_is_refused_in_the_askers_language(
    bot: Bot,
) -> None:
    """A voice note whose file Telegram no longer gives (``getFile`` refuses its id): one
    sentence, in the asker's app language when the chat set none (French here)."""
    french_ann = ANN | {"language_code": "fr"}
    note = bot.peer.voice(voice("en.ogg"), duration=5)
    bot.peer.files.clear()  # getFile: "invalid file_id", as for a file Telegram dropped
    bot.peer.send(CHAT, french_ann, voice=note)
    listening = words_for("French")(LISTENING)
    said = await bot.peer.wait_for(
        lambda: [m for m in bot.peer.bot_messages(CHAT["id"]) if m["text"] != listening], 30
    )
    french = words_for("French")(NOT_DOWNLOADED)
    assert french != NOT_DOWNLOADED and [m["text"] for m in said] == [french]
    assert bot.peer.downloads == [] and bot.transcription.requests == [] and bot.checks() == []


@pytest.mark.parametrize(
    ("note", "sentence"),
    [
        (  # refused from what Telegram declares, before any download
            {"duration": 61},
            "La note vocale dure 1 minute 1 seconde ; les notes vocales sont transcrites "
            "jusqu'à 1 minute.",
        ),
        (  # downloaded, and refused by the engine's reading of its bytes
            {"data": b"These are not the bytes of a voice note at all.\n" * 4},
            "Je sais transcrire les notes vocales et les fichiers audio en OGG, MP3, M4A, WAV "
            "ou FLAC, pas ce fichier ; envoyez l'affirmation sous forme de texte.",
        ),
    ],
)
async def test_the_engine_s_refusal_of_a_voice_note_is_said_in_the_askers_language(
    bot: Bot, note: dict[str, Any], sentence: str
) -> None:
    """A French asker's voice note past the duration cap, or not audio at all, is refused
    in French, worded by render/ from the refusal's kind (its duration in French words);
    nothing is sent to the transcriber, nothing stored."""
    french_ann = ANN | {"language_code": "fr"}
    data = note.get("data", voice("en.ogg"))
    bot.peer.send(CHAT, french_ann, voice=bot.peer.voice(data, duration=note.get("duration", 5)))
    listening = words_for("French")(LISTENING)
    said = await bot.peer.wait_for(
        lambda: [m for m in bot.peer.bot_messages(CHAT["id"]) if m["text"] != listening], 30
    )
    assert [m["text"] for m in said] == [sentence]
    assert bot.transcription.requests == [] and bot.checks() == []
