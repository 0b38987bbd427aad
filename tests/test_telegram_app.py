"""The parts of the Telegram application around the handlers: the bot token kept out of
the terminal and the log, shutdown waiting for every delivery, and progress that stops
following once the requester's own check is settled."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from click.testing import CliRunner
from peers.loopback import running_in_thread
from peers.search_peers import closed_port
from peers.telegram_peer import FakeBotAPI
from telegram.error import InvalidToken

from bots.cli import main
from bots.telegram.app import quiet_logs
from bots.telegram.delivery import until_settled
from bots.telegram.settings import TelegramSettings
from bots.telegram.state import BotState
from storage.service import CheckService, Outcome
from zofia_engine.post import ProgressEvent

WRONG = "987654:WRONG-secret_token_0123456789abcdef"


@pytest.fixture
def logging_restored() -> Iterator[None]:
    """``quiet_logs`` changes global logging: undo it after the test."""
    root = logging.getLogger()
    filters = {handler: list(handler.filters) for handler in root.handlers}
    levels = {name: logging.getLogger(name).level for name in ("httpx", "httpcore")}
    try:
        yield
    finally:
        for handler in root.handlers:
            handler.filters[:] = filters.get(handler, [])
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def test_a_rejected_token_names_its_variable_and_is_never_printed(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    logging_restored: None,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    with running_in_thread(FakeBotAPI()) as peer:
        assert isinstance(peer, FakeBotAPI)
        env = {"TELEGRAM_BOT_TOKEN": WRONG, "ZOFIA__TELEGRAM__BASE_URL": f"{peer.root}/bot"}
        with caplog.at_level(logging.DEBUG):
            result = CliRunner().invoke(main, ["telegram"], env=env)
        assert peer.unauthorized >= 1  # the server was asked, and said 401
    assert result.exit_code == 1
    assert "$TELEGRAM_BOT_TOKEN" in result.output and "rejected" in result.output
    assert "Traceback" not in result.output
    for text in (result.output, caplog.text):
        assert WRONG not in text and "WRONG-secret" not in text


def test_no_network_at_start_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, logging_restored: None
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    env = {
        "TELEGRAM_BOT_TOKEN": WRONG,
        "ZOFIA__TELEGRAM__BASE_URL": f"http://127.0.0.1:{closed_port()}/bot",
    }
    result = CliRunner().invoke(main, ["telegram"], env=env)
    assert result.exit_code == 1
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: Could not reach the Telegram Bot API at 127.0.0.1")
    assert "[telegram] base_url" in line and "httpx" not in line


def test_a_logged_exception_never_shows_the_token(
    caplog: pytest.LogCaptureFixture, logging_restored: None
) -> None:
    redactor = quiet_logs(WRONG)
    assert any(redactor in handler.filters for handler in logging.getLogger().handlers)
    log = logging.getLogger("bots.telegram.app")
    with caplog.at_level(logging.INFO):
        try:
            raise InvalidToken(f"The token `{WRONG}` was rejected by the server.")
        except InvalidToken:
            log.exception("starting failed")
        log.warning("stack", stack_info=True, extra={"token": WRONG})
    assert "Traceback" in caplog.text and "was rejected by the server" in caplog.text
    assert "The token `<token>` was rejected" in caplog.text
    assert WRONG not in caplog.text
    record = caplog.records[0]
    assert record.exc_text is not None and WRONG not in record.exc_text


def _state() -> BotState:
    return BotState(cast(CheckService, None), TelegramSettings())


async def test_shutdown_refuses_new_deliveries_and_waits_for_the_running_ones() -> None:
    state = _state()
    finished: list[str] = []
    release = asyncio.Event()

    async def delivery(name: str) -> None:
        await release.wait()
        finished.append(name)

    async def late_delivery() -> None:  # a handler still running when shutdown begins
        finished.append("late")

    assert state.spawn(delivery("first"))
    async with asyncio.timeout(10):
        drain = asyncio.create_task(state.drain(5.0))
        await asyncio.sleep(0)
        assert state.closing
        assert not state.spawn(late_delivery())  # refused; closed unstarted, no warning
        assert not drain.done()  # the running delivery is waited for
        release.set()
        await drain
    assert finished == ["first"] and not state.deliveries


async def test_shutdown_cancels_what_outlives_the_grace_and_waits_for_its_last_words() -> None:
    state = _state()
    said: list[str] = []

    async def delivery() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # e.g. editing its message to say it was interrupted
            said.append("interrupted")
            raise

    state.spawn(delivery())
    state.spawn(delivery())
    async with asyncio.timeout(10):
        await state.drain(0.05)
    assert said == ["interrupted", "interrupted"] and not state.deliveries


class _Handle:
    """A check another requester still waits for: its events go on after ours is settled."""

    def __init__(self) -> None:
        self.outcome: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self.closed = False

    async def events(self) -> AsyncIterator[ProgressEvent]:
        try:
            n = 0
            while True:
                n += 1
                yield cast(ProgressEvent, n)
                await asyncio.sleep(0.01)
        finally:
            self.closed = True

    async def result(self) -> Outcome:
        return await asyncio.shield(self.outcome)


async def test_progress_stops_when_the_requesters_own_check_is_cancelled() -> None:
    handle = _Handle()
    seen: list[Any] = []
    async with asyncio.timeout(10):
        async for event in until_settled(handle):
            seen.append(event)
            if len(seen) == 3:
                handle.outcome.cancel()  # the requester pressed Cancel
    assert seen[:3] == [1, 2, 3] and len(seen) <= 4
    assert handle.closed  # the run's event stream was let go


async def test_progress_ends_with_the_events_when_they_end_first() -> None:
    class Finished(_Handle):
        async def events(self) -> AsyncIterator[ProgressEvent]:
            for n in (1, 2):
                yield cast(ProgressEvent, n)

    handle = Finished()
    async with asyncio.timeout(10):
        seen = [event async for event in until_settled(handle)]
    assert seen == [1, 2] and not handle.outcome.done()


def test_a_chat_posting_as_itself_is_its_own_requester() -> None:
    """Anonymous admins, channels and linked-channel forwards all come "from" one of
    Telegram's shared service accounts; each chat must count as itself, not as that."""
    import datetime as dt

    from telegram import Chat, Message, User

    from bots.telegram.inputs import _asker

    when = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)
    anonymous = User(1087968824, "Group", is_bot=True, username="GroupAnonymousBot")
    seen = {
        _asker(
            Message(
                1,
                when,
                Chat(group, "supergroup"),
                from_user=anonymous,
                sender_chat=Chat(group, "supergroup"),
            )
        )
        for group in (-1001, -1002)
    }
    assert seen == {-1001, -1002}
    person = User(42, "Ann", is_bot=False)
    assert _asker(Message(2, when, Chat(-1001, "supergroup"), from_user=person)) == 42
