"""What Discord's inputs that the bot cannot check are told: the real discord.py client
against the fake Discord (REST and gateway on loopback), the real check service on a
tmp SQLite file and a scripted checker. A sticker, or a video, gets exactly one
sentence saying what the bot can check, and no check starts."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.peers.fakes.fake_checker import FakeChecker, fake_service
from tests.peers.servers.discord_peer import Call, FakeDiscord, running_client

from bots.app.settings import Settings
from bots.discord.client import FactCheckBot
from bots.discord.commands import NOT_A_LINK, ONE_OR_OTHER
from bots.discord.text_files import NOT_TEXT
from bots.render.sentences import UNSUPPORTED_INPUT
from bots.render.words import words_for

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]

GENEROUS = {"user_per_minute": 100, "chat_per_minute": 100, "user_daily": 1000}
StartBot = Callable[[], contextlib.AbstractAsyncContextManager[FactCheckBot]]


@pytest.fixture
def checker() -> FakeChecker:
    return FakeChecker()


@pytest_asyncio.fixture
async def start_bot(
    discord_api: FakeDiscord, checker: FakeChecker, tmp_path: Path
) -> AsyncIterator[StartBot]:
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
            fake_service(settings, checker) as service,
            running_client(FactCheckBot(settings.discord, service)) as bot,
        ):
            yield bot

    yield start


def _said(peer: FakeDiscord, payload: dict[str, Any]) -> list[str]:
    """Everything the interaction was answered with, in order: a reply of its own, an
    edit of its deferred response, a follow-up message (a deferral says nothing)."""
    found = []
    for call in peer.calls:
        body = call.body or {}
        if call.path.startswith(f"/interactions/{payload['id']}/") and body.get("type") == 4:
            found.append(str(body["data"]["content"]))
        elif call.path.startswith("/webhooks/") and f"/{payload['token']}" in call.path:
            found.append(str(body.get("content") or ""))
    return found


def _answered(payload: dict[str, Any]) -> Callable[[Call], bool]:
    def match(call: Call) -> bool:
        body = call.body or {}
        reply = call.path.startswith(f"/interactions/{payload['id']}/") and body["type"] == 4
        return reply or (call.method == "PATCH" and f"/{payload['token']}/" in call.path)

    return match


def _one_sentence(text: str) -> bool:
    return text.endswith(".") and text.count(". ") == 0 and "\n" not in text


def _sticker(sticker_id: int) -> dict[str, Any]:
    return {"id": str(sticker_id), "name": "wave", "format_type": 1}


@pytest.mark.parametrize("kind", ["sticker", "video"])
async def test_a_message_with_only_a_sticker_or_a_video_gets_what_the_bot_checks(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot, kind: str
) -> None:
    if kind == "sticker":
        extra = {"sticker_items": [_sticker(discord_api.snowflake())]}
        target = discord_api.message("", author=discord_api.user(910000000000000002), extra=extra)
    else:
        clip = discord_api.attachment(
            b"\x00\x00\x00\x18ftypmp42", "clip.mp4", content_type="video/mp4"
        )
        target = discord_api.message("", attachments=[clip])
    async with start_bot() as bot:
        payload = discord_api.message_command("Fact-check", target)
        await discord_api.dispatch("INTERACTION_CREATE", payload)
        await discord_api.wait_for(_answered(payload), timeout=30)
        history = bot.service.store.checks.history()
    said = _said(discord_api, payload)
    assert said == [UNSUPPORTED_INPUT] and _one_sentence(said[0])
    assert "text, links, images (a screenshot too) and voice notes" in said[0]
    assert checker.runs == [] and history == []
    assert discord_api.downloads == []  # nothing was fetched to find that out
    assert not discord_api.calls_to("POST", "/channels/")


async def test_factcheck_given_a_video_as_its_image_gets_what_the_bot_checks(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot
) -> None:
    video = discord_api.attachment(b"\x1aE\xdf\xa3webm", "clip.webm", content_type="video/webm")
    async with start_bot() as bot:
        payload = discord_api.slash("factcheck", {"image": video})
        await discord_api.dispatch("INTERACTION_CREATE", payload)
        reply = await discord_api.wait_for(_answered(payload), timeout=30)
        history = bot.service.store.checks.history()
    assert reply.body["type"] == 4 and reply.body["data"]["flags"] == 64  # only to the asker
    said = _said(discord_api, payload)
    assert said == [UNSUPPORTED_INPUT] and _one_sentence(said[0])
    assert checker.runs == [] and history == []
    assert discord_api.downloads == []


async def test_a_video_as_the_image_is_refused_in_the_requesters_discord_language(
    discord_api: FakeDiscord, checker: FakeChecker, start_bot: StartBot
) -> None:
    video = discord_api.attachment(b"\x1aE\xdf\xa3webm", "clip.webm", content_type="video/webm")
    async with start_bot():
        payload = discord_api.slash("factcheck", {"image": video})
        payload["locale"] = "de"  # refused before the server's language is read
        await discord_api.dispatch("INTERACTION_CREATE", payload)
        await discord_api.wait_for(_answered(payload), timeout=30)
    german = words_for("German")(UNSUPPORTED_INPUT)
    assert german != UNSUPPORTED_INPUT and _said(discord_api, payload) == [german]
    assert checker.runs == [] and discord_api.downloads == []


@pytest.mark.parametrize(
    ("options", "sentence"),
    [
        ({}, ONE_OR_OTHER),
        ({"message_link": "https://example.com/news/1"}, NOT_A_LINK),
        ({"file": "pdf"}, NOT_TEXT),
    ],
)
async def test_a_malformed_factcheck_is_refused_in_the_requesters_discord_language(
    discord_api: FakeDiscord,
    checker: FakeChecker,
    start_bot: StartBot,
    options: dict[str, Any],
    sentence: str,
) -> None:
    if options.get("file") == "pdf":
        options = {
            "file": discord_api.attachment(b"%PDF-1.7", "post.pdf", content_type="application/pdf")
        }
    async with start_bot():
        payload = discord_api.slash("factcheck", options)
        payload["locale"] = "fr"
        await discord_api.dispatch("INTERACTION_CREATE", payload)
        await discord_api.wait_for(_answered(payload), timeout=30)
    french = words_for("French")(sentence)
    assert french != sentence and _said(discord_api, payload) == [french]
    assert checker.runs == [] and discord_api.downloads == []
