"""The Discord bot stopped by SIGTERM with a check in progress (issue 45, item 7): the
whole process path (:func:`bots.app.discord.run_bot`: its signal handlers, the service,
the client on the fake Discord) on the real engine, whose model is held at our own LLM
port (:class:`~tests.peers.fakes.held_model.HeldModel`) so the check is in progress
when the signal comes, however fast the machine.

The client closes only once the checks it took are answered or handed back: a check
that finishes within the grace gets its card, a command that comes during the grace is
told the bot is restarting, and a check the grace cuts short goes back to the queue
with its asker told, all while the connection is still open; the run ends, and nothing
is logged with a traceback (before, the client closed under its checks, which then
failed with "Session is closed").
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.peers.fixtures.engine_setup import HELD_POST, HeldEngine, held_sections
from tests.peers.servers.discord_peer import DISCORD_TOKEN, Call, FakeDiscord

from bots.app.discord import run_bot
from bots.app.settings import Settings
from bots.render.sentences import INTERRUPTED, RESTARTING
from storage.opening import open_store

pytest_plugins = ["tests.peers.fixtures.discord_fixtures", "tests.peers.fixtures.held_engine"]

ANN = 920000000000000051
EPHEMERAL = 64
#: the longest the bot may take to stop, far past what it needs (the test fails, not hangs)
STOP_BOUND_S = 60.0


def _settings(folder: Path) -> Settings:
    return Settings.model_validate(
        {
            "storage": {"path": str(folder / "zofia.db"), "secret": "s3cret-for-tests-only"},
            "discord": {"progress_interval_s": 0, "guild_cooldown_s": 0},
            **held_sections(),
        }
    )


def _of(payload: dict[str, Any]) -> Callable[[Call], bool]:
    """Calls that answer ``payload``: its callback, and its webhook's requests."""

    def match(call: Call) -> bool:
        ours = f"/interactions/{payload['id']}/" in call.path
        return ours or f"/webhooks/{FakeDiscord.APP_ID}/{payload['token']}" in call.path

    return match


def _last_edit(peer: FakeDiscord, payload: dict[str, Any]) -> dict[str, Any]:
    """The last edit of ``payload``'s response (``{}``: none)."""
    edits = [c.body for c in peer.calls if _of(payload)(c) and c.method == "PATCH"]
    return edits[-1] if edits else {}


def _tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The log lines that carry a traceback."""
    return [r.getMessage() for r in caplog.records if r.exc_info or r.stack_info] + [
        line for line in caplog.text.splitlines() if line.startswith("Traceback")
    ]


async def _running(settings: Settings, held: HeldEngine, grace_s: float) -> asyncio.Task[None]:
    """The bot as ``zofia discord`` runs it, on the held engine."""
    engine = held.make(settings.engine)
    return asyncio.create_task(run_bot(settings, DISCORD_TOKEN, grace_s=grace_s, engine=engine))


async def _signalled_mid_check(peer: FakeDiscord, held: HeldEngine) -> dict[str, Any]:
    """Send ``/factcheck`` once the bot is connected, wait until its check is held at the
    model, then send SIGTERM to this process (the bot's handlers take it)."""
    async with asyncio.timeout(STOP_BOUND_S):
        await peer.identified.wait()
    asked = peer.slash("factcheck", {"text": HELD_POST}, user_id=ANN)
    await peer.dispatch("INTERACTION_CREATE", asked)
    await held.model.holding()
    signal.raise_signal(signal.SIGTERM)
    return asked


async def _stopped(bot: asyncio.Task[None]) -> None:
    async with asyncio.timeout(STOP_BOUND_S):
        await bot


async def _logged(caplog: pytest.LogCaptureFixture, words: str) -> None:
    """Wait until a log line says ``words`` (bounded)."""
    async with asyncio.timeout(STOP_BOUND_S):
        while not any(words in record.getMessage() for record in caplog.records):
            await asyncio.sleep(0.01)


async def test_the_bot_answers_what_it_took_and_turns_new_checks_away_before_it_closes(
    discord_api: FakeDiscord,
    held_engine: HeldEngine,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    bot = await _running(_settings(tmp_path), held_engine, grace_s=STOP_BOUND_S)
    asked = await _signalled_mid_check(discord_api, held_engine)
    await _logged(caplog, "running checks get")  # the grace has begun
    late = discord_api.slash("factcheck", {"text": f"{HELD_POST} Again."}, user_id=ANN)
    await discord_api.dispatch("INTERACTION_CREATE", late)
    told = await discord_api.wait_for(_of(late), timeout=STOP_BOUND_S)
    held_engine.model.let_go()  # the check taken finishes within the grace
    await _stopped(bot)
    assert told.body["type"] == 4  # answered at once, not deferred: nothing was taken
    assert told.body["data"]["content"] == RESTARTING
    assert told.body["data"]["flags"] == EPHEMERAL  # to the member alone
    assert _last_edit(discord_api, asked).get("embeds"), "the check taken got its card"
    assert _tracebacks(caplog) == []


async def test_a_check_the_grace_cuts_short_is_handed_back_and_its_asker_told(
    discord_api: FakeDiscord,
    held_engine: HeldEngine,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    settings = _settings(tmp_path)
    bot = await _running(settings, held_engine, grace_s=0.0)
    asked = await _signalled_mid_check(discord_api, held_engine)
    await _stopped(bot)
    assert _last_edit(discord_api, asked).get("content") == INTERRUPTED
    assert held_engine.model.answered == 0
    assert _tracebacks(caplog) == []
    store, _ = open_store(settings.storage)
    try:  # handed back: queued, for the next start to resume
        assert [row.status for row, _ in store.checks.history()] == ["queued"]
    finally:
        store.close()
