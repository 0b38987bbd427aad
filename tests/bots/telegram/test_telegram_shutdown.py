"""The Telegram bot stopped by SIGTERM with a check in progress (issue 45, item 7): the
whole process path (:func:`bots.app.telegram.serve`: its signal handlers, the service,
the bot polling the fake Bot API) on the real engine, whose model is held at our own LLM
port (:class:`~tests.peers.fakes.held_model.HeldModel`) so the check is in progress
when the signal comes, however fast the machine.

A check that finishes within the grace is answered with its card; one the grace cuts
short goes back to the queue and its asker is told so in one sentence; either way the
bot's loop ends, and nothing is logged with a traceback.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.peers.fixtures.engine_setup import HELD_POST as POST
from tests.peers.fixtures.engine_setup import HeldEngine, held_sections
from tests.peers.fixtures.telegram_setup import telegram_settings
from tests.peers.servers.telegram_peer import TOKEN, FakeBotAPI, user

from bots.app.settings import Settings
from bots.app.telegram import ChatPacedRateLimiter, serve
from bots.render.sentences import INTERRUPTED
from storage.opening import open_store

pytest_plugins = ["tests.peers.fixtures.held_engine"]

ANN = user(751, "Ann", "ann_r")
CHAT = {"id": ANN["id"], "type": "private", "first_name": "Ann"}
#: the longest the bot may take to stop, far past what it needs (the test fails, not hangs)
STOP_BOUND_S = 60.0


def _is_card(message: dict[str, Any]) -> bool:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return any(str(b.get("callback_data", "")).startswith("d:") for row in rows for b in row)


def _answer(peer: FakeBotAPI, asked: dict[str, Any]) -> dict[str, Any]:
    """The bot's answer to ``asked`` as it stands now (``{}``: none yet)."""
    for message in peer.bot_messages(CHAT["id"]):
        if (message.get("reply_to_message") or {}).get("message_id") == asked["message_id"]:
            return message
    return {}


def _tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The log lines that carry a traceback."""
    return [r.getMessage() for r in caplog.records if r.exc_info or r.stack_info] + [
        line for line in caplog.text.splitlines() if line.startswith("Traceback")
    ]


async def _serving(settings: Settings, held: HeldEngine, grace_s: float) -> asyncio.Task[None]:
    """The bot as ``zofia telegram`` runs it, on the held engine, polling briskly."""
    engine = held.make(settings.engine)
    limiter = ChatPacedRateLimiter(chat_burst=0)  # private chats not paced
    work = serve(
        settings, TOKEN, grace_s=grace_s, engine=engine, poll_timeout_s=1, rate_limiter=limiter
    )
    return asyncio.create_task(work)


async def _signalled_mid_check(peer: FakeBotAPI, held: HeldEngine) -> dict[str, Any]:
    """Forward the post, wait until its check is held at the model, then send SIGTERM to
    this process (the bot's handlers take it)."""
    asked = peer.send(CHAT, ANN, POST)
    await held.model.holding()
    signal.raise_signal(signal.SIGTERM)
    return asked


def _settings(peer: FakeBotAPI, folder: Path) -> Settings:
    return telegram_settings(peer, folder, **held_sections())


async def _stopped(bot: asyncio.Task[None]) -> None:
    async with asyncio.timeout(STOP_BOUND_S):
        await bot


async def _logged(caplog: pytest.LogCaptureFixture, words: str) -> None:
    """Wait until a log line says ``words`` (bounded)."""
    found: Callable[[], bool] = lambda: any(words in r.getMessage() for r in caplog.records)  # noqa: E731
    async with asyncio.timeout(STOP_BOUND_S):
        while not found():
            await asyncio.sleep(0.01)


async def test_a_check_that_ends_within_the_grace_is_answered_before_the_bot_stops(
    held_engine: HeldEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with FakeBotAPI() as peer:
        bot = await _serving(_settings(peer, tmp_path), held_engine, grace_s=STOP_BOUND_S)
        asked = await _signalled_mid_check(peer, held_engine)
        await _logged(caplog, "running checks get")  # the grace has begun
        held_engine.model.let_go()  # the check finishes within it
        await _stopped(bot)
        answer = _answer(peer, asked)
    assert _is_card(answer), answer
    assert held_engine.model.answered > 0
    assert _tracebacks(caplog) == []


async def test_a_check_the_grace_cuts_short_is_handed_back_and_its_asker_told(
    held_engine: HeldEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with FakeBotAPI() as peer:
        settings = _settings(peer, tmp_path)
        bot = await _serving(settings, held_engine, grace_s=0.0)
        asked = await _signalled_mid_check(peer, held_engine)
        await _stopped(bot)
        answer = _answer(peer, asked)
    assert answer.get("text") == INTERRUPTED, answer
    assert held_engine.model.answered == 0
    assert _tracebacks(caplog) == []
    store, _ = open_store(settings.storage)
    try:  # handed back: queued, for the next start to resume
        assert [row.status for row, _ in store.checks.history()] == ["queued"]
    finally:
        store.close()
