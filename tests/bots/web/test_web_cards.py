"""The "Full report" link on the verdict cards, end to end: the real python-telegram-bot
client polling the fake Bot API, and the real discord.py client on the fake Discord,
over the real check service with a scripted checker. With ``[site] public_url`` set,
every card links to its check's page; without it, no card has a link."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.peers.fakes.fake_checker import FakeChecker, fake_service
from tests.peers.fixtures.telegram_setup import fake_bot, telegram_settings
from tests.peers.servers.discord_peer import Call, FakeDiscord, running_client
from tests.peers.servers.telegram_peer import FakeBotAPI, user

from bots.app.settings import Settings
from bots.discord.client import FactCheckBot
from bots.render.links import report_url
from bots.telegram.render import card_keyboard

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]

PUBLIC = "https://factcheck.example.org/zofia"
POST = "The mayor of Springfield has banned bicycles from every street in the city."
ANN = user(701, "Ann", "ann_w")
CHAT = {"id": ANN["id"], "type": "private", "first_name": "Ann"}
GENEROUS = {"user_per_minute": 100, "chat_per_minute": 100, "user_daily": 1000}
Start = Callable[[str], contextlib.AbstractAsyncContextManager[Any]]


def _settings(tmp_path: Path, public_url: str, **sections: Any) -> Settings:
    return Settings.model_validate(
        {
            "storage": {"path": str(tmp_path / "zofia.db"), "secret": "s3cret-for-tests-only"},
            "service": GENEROUS,
            "site": {"public_url": public_url},
            **sections,
        }
    )


def test_the_address_of_a_page() -> None:
    assert report_url(PUBLIC, "abcDEF123_-xyz45") == f"{PUBLIC}/c/abcDEF123_-xyz45"
    assert report_url("", "abcDEF123_-xyz45") == ""
    links = card_keyboard("abcDEF123_-xyz45", report_url=f"{PUBLIC}/c/x").inline_keyboard[-1]
    assert [(b.text, b.url) for b in links] == [("Full report", f"{PUBLIC}/c/x")]


# -- Telegram ------------------------------------------------------------------------------


def _telegram_links(message: dict[str, Any]) -> list[tuple[str, str]]:
    """The card's link buttons, but Share (a deep link to the bot, with or without a
    report page; tests/bots/telegram/test_share_telegram.py has it)."""
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return [
        (b["text"], b["url"]) for row in rows for b in row if "url" in b and b["text"] != "Share"
    ]


@pytest_asyncio.fixture
async def telegram(tmp_path: Path) -> AsyncIterator[Start]:
    @contextlib.asynccontextmanager
    async def start(public_url: str) -> AsyncIterator[FakeBotAPI]:
        async with FakeBotAPI() as peer:
            settings = telegram_settings(peer, tmp_path, site={"public_url": public_url})
            async with fake_bot(settings, FakeChecker()):
                yield peer

    yield start


async def _telegram_card(peer: FakeBotAPI, text: str) -> dict[str, Any]:
    peer.send(CHAT, ANN, text)

    def card() -> dict[str, Any] | None:
        for message in peer.bot_messages(CHAT["id"]):
            rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
            if any(b.get("callback_data", "").startswith("d:") for row in rows for b in row):
                return message
        return None

    found: dict[str, Any] = await peer.wait_for(card, 60)
    return found


async def test_telegram_cards_link_to_the_page_when_there_is_one(telegram: Start) -> None:
    async with telegram(PUBLIC) as peer:
        card = await _telegram_card(peer, POST)
        [(label, url)] = _telegram_links(card)
        check_id = url.rsplit("/", 1)[-1]
        assert label == "Full report" and url == f"{PUBLIC}/c/{check_id}"
        assert f"d:{check_id}" in str(card["reply_markup"])
        # A vote redraws the keyboard: the link stays.
        peer.press(card, f"u:{check_id}", ANN)
        await peer.wait_for(lambda: peer.sent("editMessageReplyMarkup"), 30)
        await asyncio.sleep(0.1)
        [current] = [
            m for m in peer.bot_messages(CHAT["id"]) if m["message_id"] == card["message_id"]
        ]
        assert _telegram_links(current) == [("Full report", url)]


async def test_telegram_cards_have_no_link_without_an_address(telegram: Start) -> None:
    async with telegram("") as peer:
        card = await _telegram_card(peer, POST)
        assert _telegram_links(card) == []


# -- Discord -------------------------------------------------------------------------------


@pytest_asyncio.fixture
async def discord_bot(discord_api: FakeDiscord, tmp_path: Path) -> AsyncIterator[Start]:
    @contextlib.asynccontextmanager
    async def start(public_url: str) -> AsyncIterator[FakeDiscord]:
        settings = _settings(
            tmp_path, public_url, discord={"progress_interval_s": 0, "guild_cooldown_s": 0}
        )
        async with fake_service(settings, FakeChecker()) as service:
            bot = FactCheckBot(settings.discord, service, public_url=settings.site.public_url)
            async with running_client(bot):
                yield discord_api

    yield start


async def _discord_verdict(peer: FakeDiscord) -> dict[str, Any]:
    """Run /factcheck; the body of the edit that shows the verdict card."""
    payload = peer.slash("factcheck", {"text": POST})
    await peer.dispatch("INTERACTION_CREATE", payload)

    def shown(call: Call) -> bool:
        edits = [
            c for c in peer.calls_to("PATCH", "/webhooks/") if f"/{payload['token']}/" in c.path
        ]
        return call in edits and bool(call.body.get("embeds"))

    call = await peer.wait_for(shown, timeout=60)
    body: dict[str, Any] = call.body
    return body


def _discord_links(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The verdict's link buttons, but Share (the same page's address to pass on)."""
    buttons = [b for row in body.get("components", []) for b in row["components"]]
    return [
        (b["label"], b["url"]) for b in buttons if b.get("style") == 5 and b["label"] != "Share"
    ]


async def test_discord_verdicts_link_to_the_page_when_there_is_one(discord_bot: Start) -> None:
    async with discord_bot(PUBLIC) as peer:
        body = await _discord_verdict(peer)
        check_id = body["embeds"][0]["footer"]["text"].split("Check ")[-1]
        assert _discord_links(body) == [("Full report", f"{PUBLIC}/c/{check_id}")]
        custom = [b.get("custom_id") for row in body["components"] for b in row["components"]]
        assert f"zf:debate:{check_id}" in custom


async def test_discord_verdicts_have_no_link_without_an_address(discord_bot: Start) -> None:
    async with discord_bot("") as peer:
        body = await _discord_verdict(peer)
        assert body["components"] and _discord_links(body) == []


@pytest.mark.parametrize("bad", ["javascript:alert(1)", "https://"])
def test_a_bad_public_address_is_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError, match="public_url"):
        _settings(tmp_path, bad)
