"""Nothing slow on the event loop: while the store is held for seconds, by another thread
in its write (SQLite) or by another PostgreSQL session holding the advisory write lock
(as another replica's slow transaction would), the bots' handlers and the report pages
wait for it off the loop. A ticker on the loop measures its longest stall; it stays
under a third of the hold (a loop blocked on the store stalls for about the whole hold;
a busy machine's scheduling alone stalls it for a tenth of a second or more), while each
handler's answer comes only once the store is free (so it did wait for the store).
Discord is acknowledged before that: Discord drops an interaction not acknowledged
within 3 s.

The bots are the real ones (python-telegram-bot and discord.py against the fake
platforms on loopback); the checker is :class:`~tests.peers.fakes.fake_checker.FakeChecker`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from tests.factories import full_report, stored_check
from tests.loop_watch import LoopWatch, StoreHeld, advisory_lock_held, write_held
from tests.peers.fakes.fake_checker import FakeChecker, fake_service, submit
from tests.peers.fixtures.telegram_setup import fake_bot
from tests.peers.servers.discord_peer import FakeDiscord, running_client
from tests.peers.servers.telegram_peer import BotCall, FakeBotAPI, group, user

from bots.app.settings import Settings
from bots.discord import commands
from bots.discord.client import FactCheckBot
from bots.service.pages import ReportPages
from bots.service.records import Requester
from bots.web.app import build_app
from bots.web.settings import SiteSettings
from storage.opening import open_store
from storage.store import CheckStore
from zofia_engine.post import Post

pytest_plugins = ["tests.peers.fixtures.discord_fixtures"]
# Each test holds the store for HOLD_S of real time on purpose: the slow tier (CI runs it).
pytestmark = pytest.mark.slow

HOLD_S = 3.0  # how long the store is held
# The longest the loop may stall meanwhile. A loop blocked on the held store stalls for
# about HOLD_S; one that is not still stalls for whatever the OS's scheduling takes, over
# 0.1 s on a busy machine. A third of the hold tells the two apart with room either way.
STALL_S = HOLD_S / 3
# How long a Discord check waits for its server's settings before it is acknowledged
# anyway (``bots.discord.commands.SETTINGS_WAIT_S``, 1 s), here half the hold: the check's
# acknowledgment comes while the store is still held.
SETTINGS_WAIT_S = HOLD_S / 2
SECRET = "s3cret-for-tests-only"
POST = "The river bridge in Springfield will close for all of 2027, the mayor said."
OTHER = "Scientists in Chicago say that drinking coffee at night doubles your lifespan."
ANN = user(501, "Ann", "ann_s")
BOB = user(502, "Bob")
GROUP = group(-100200, "Rumour mill")
FORWARDED = {"type": "user", "sender_user": BOB, "date": 1_700_000_000}


@dataclass
class Engine:
    """A store's settings, and what holds it from elsewhere."""

    name: str
    storage: dict[str, Any]
    hold: Callable[[CheckStore, float], StoreHeld]  # the store, and for how long

    def settings(self, **sections: Any) -> Settings:
        return Settings.model_validate(
            {
                "storage": self.storage,
                "service": {"user_per_minute": 100, "chat_per_minute": 100, "user_daily": 1000},
                "queue": {"heartbeat_s": 1.0, "stalled_after_s": 3.0, "poll_s": 0.5},
                **sections,
            }
        )


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    """SQLite, held by a thread in the store's write; or PostgreSQL (the queued mode),
    held by another session holding the advisory write lock while a write of this
    process waits for it."""
    if request.param == "sqlite":
        storage = {"path": str(tmp_path / "zofia.db"), "secret": SECRET}
        return Engine("sqlite", storage, write_held)
    url = request.getfixturevalue("postgres_url")
    return Engine(
        "postgresql",
        {"url": url, "secret": SECRET},
        lambda store, seconds: advisory_lock_held(url, store, seconds),
    )


def _said(peer: FakeBotAPI, chat_id: int, words: str) -> BotCall | None:
    calls = peer.sent("sendMessage", chat_id)
    return next((c for c in calls if words in str(c.params.get("text"))), None)


def _buttons(message: dict[str, Any]) -> list[str]:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return [b["callback_data"] for row in rows for b in row if "callback_data" in b]


def _card(peer: FakeBotAPI, chat_id: int) -> dict[str, Any] | None:
    """The bot's newest verdict card in a chat (a message with a Debate button)."""
    message: dict[str, Any]  # mypy types reversed() of a list of dict[str, Any] as Any
    for message in reversed(peer.bot_messages(chat_id)):
        if any(data.startswith("d:") for data in _buttons(message)):
            return message
    return None


def _private(sender: dict[str, Any]) -> dict[str, Any]:
    return {"id": sender["id"], "type": "private", "first_name": sender["first_name"]}


async def test_telegram_handlers_wait_for_a_held_store_off_the_loop(engine: Engine) -> None:
    async with FakeBotAPI(admins={ANN["id"]}) as peer:
        telegram = {"base_url": f"{peer.root}/bot", "progress_interval_s": 0}
        settings = engine.settings(telegram={**telegram, "chat_cooldown_s": 0})
        async with fake_bot(settings, FakeChecker(), grace_s=1.0) as service:
            card = None
            if engine.name == "sqlite":  # a card to vote on (on PostgreSQL, no worker runs)
                peer.send(_private(ANN), ANN, POST)
                card = await peer.wait_for(lambda: _card(peer, ANN["id"]), 30)
            held = engine.hold(service.store, HOLD_S)
            async with LoopWatch() as watch:
                peer.send(GROUP, ANN, "/settings autocheck on")  # a write
                peer.send(GROUP, BOB, OTHER, forward_origin=FORWARDED)  # its switch read
                peer.send(_private(BOB), BOB, OTHER)  # a check: its limits read first
                vote = None
                if card is not None:
                    up = next(data for data in _buttons(card) if data.startswith("u:"))
                    vote = peer.press(card, up, ANN)
                said = await peer.wait_for(lambda: _said(peer, GROUP["id"], "Auto-check"), 30)
                await peer.wait_for(lambda: peer.bot_messages(BOB["id"]), 30)  # the check began
                if vote is not None:
                    await peer.wait_for(lambda: peer.sent("answerCallbackQuery"), 30)
                await held.done()
            assert watch.longest < STALL_S, f"the loop stalled {watch.longest:.3f} s"
            assert watch.ticks > HOLD_S / 0.05  # it ticked all along
            assert said.at >= held.released_at  # the handler did wait for the store
            if vote is not None:
                [answer] = peer.sent("answerCallbackQuery")
                assert answer.at >= held.released_at
                assert str(answer.params.get("text")).startswith("Thanks")


def _callback(payload: dict[str, Any]) -> Callable[[Any], bool]:
    """Matches the interaction's response (its acknowledgment)."""
    return lambda call: str(call.path).startswith(f"/interactions/{payload['id']}/")


def _followup(payload: dict[str, Any], words: str) -> Callable[[Any], bool]:
    """Matches a message sent with the interaction's token that says ``words``."""

    def match(call: Any) -> bool:
        body = call.body if isinstance(call.body, dict) else {}
        return f"/{payload['token']}" in call.path and words in str(body.get("content"))

    return match


async def test_discord_interactions_are_acknowledged_while_the_store_is_held(
    engine: Engine, discord_api: FakeDiscord, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(commands, "SETTINGS_WAIT_S", SETTINGS_WAIT_S)
    settings = engine.settings(discord={"progress_interval_s": 0, "guild_cooldown_s": 0})
    async with (
        fake_service(settings, FakeChecker()) as service,
        running_client(FactCheckBot(settings.discord, service)),
    ):
        guild = str(discord_api.GUILD_ID)
        voted = None
        if engine.name == "sqlite":  # a check of this server to vote on
            asker = Requester("discord", "900000000000000001", guild)
            voted = await (await submit(service, Post(text=POST), asker)).result()
        held = engine.hold(service.store, HOLD_S)
        async with LoopWatch() as watch:
            admin = discord_api.slash("factcheck-settings", {"language": "French"})
            check = discord_api.slash("factcheck", {"text": OTHER}, user_id=900000000000000007)
            payloads = [admin, check]
            if voted is not None:
                up = f"zf:up:{voted.check_id}"
                card = discord_api.message("", extra={"components": discord_api.action_row(up)})
                payloads.append(discord_api.button(up, card))
            for payload in payloads:
                await discord_api.dispatch("INTERACTION_CREATE", payload)
            for payload in payloads:
                ack = await discord_api.wait_for(_callback(payload), 2 * HOLD_S)
                assert ack.body["type"] == 5  # deferred
            # All acknowledged while the store was still held; the check privately, since
            # its server's settings could not be read in time.
            assert not held.released.is_set()
            assert discord_api.calls_to("POST", f"/interactions/{check['id']}/")[0].body == {
                "type": 5,
                "data": {"flags": 64},
            }
            await discord_api.wait_for(_followup(admin, "Le panel écrit en français."), 30)
            if voted is not None:
                await discord_api.wait_for(_followup(payloads[2], "Thanks"), 30)
            await held.done()
        assert watch.longest < STALL_S, f"the loop stalled {watch.longest:.3f} s"


@pytest_asyncio.fixture
async def pages(tmp_path: Path) -> AsyncIterator[tuple[CheckStore, TestClient[Any, Any]]]:
    settings = Settings.model_validate(
        {"storage": {"path": str(tmp_path / "zofia.db"), "secret": SECRET}}
    )
    store, _ = open_store(settings.storage)
    client: TestClient[Any, Any] = TestClient(
        TestServer(build_app(ReportPages(store), SiteSettings(), retention_days=30))
    )
    await client.start_server()
    try:
        yield store, client
    finally:
        await client.close()
        store.close()


async def test_a_report_page_waits_for_a_held_store_off_the_loop(
    pages: tuple[CheckStore, TestClient[Any, Any]],
) -> None:
    store, client = pages
    row = stored_check(store, full_report())
    held = write_held(store, HOLD_S)
    async with LoopWatch() as watch:
        page = await client.get(f"/c/{row.id}")
        answered = time.monotonic()
        await held.done()
    assert page.status == 200
    assert answered >= held.released_at  # the page waited for the store; the loop did not
    assert watch.longest < STALL_S, f"the loop stalled {watch.longest:.3f} s"


async def test_a_submit_itself_waits_for_a_held_store_off_the_loop(tmp_path: Path) -> None:
    storage = {"path": str(tmp_path / "zofia.db"), "secret": SECRET}
    settings = Engine("sqlite", storage, write_held).settings()
    async with fake_service(settings, FakeChecker()) as service:
        held = write_held(service.store, HOLD_S)
        async with LoopWatch() as watch:
            await submit(service, Post(text=POST), Requester("test", "user-1", "chat-1"))
            submitted = time.monotonic()
            await held.done()
        assert submitted >= held.released_at  # the submit waited for the store; the loop did not
        assert watch.longest < STALL_S, f"the loop stalled {watch.longest:.3f} s"
        assert watch.ticks > HOLD_S / 0.05  # it ticked all along
