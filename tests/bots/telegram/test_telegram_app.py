"""The parts of the Telegram application around the handlers: the bot token kept out of
the terminal and the log, and progress that stops following once the requester's own
check is settled (shutdown: ``tests/bots/chat/test_in_flight.py`` and
``test_telegram_shutdown.py``)."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from telegram.error import InvalidToken

from tests.peers.servers.loopback import running_in_thread
from tests.peers.servers.search_peers import closed_port
from tests.peers.servers.telegram_peer import FakeBotAPI

from bots.app.telegram import quiet_logs
from bots.cli import main
from bots.render.progress import follow_progress
from bots.service.handles import CheckHandle, Run
from bots.service.records import CheckFailedError, Outcome
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
    log = logging.getLogger("bots.app.telegram")
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


def _event(n: int) -> ProgressEvent:
    return ProgressEvent(kind="round", stage="debate", round=n, detail="continue")


def _shared_run(check_id: str) -> tuple[Run, CheckHandle]:
    """A run another requester still waits for, and our handle on it."""
    run = Run(check_id, dt.datetime.now(dt.UTC))
    run.waiting = 2
    outcome: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
    return run, CheckHandle(check_id, outcome, run)


async def _shown_nowhere(lines: list[str]) -> bool:
    return True


async def test_progress_stops_when_the_requesters_own_check_is_cancelled() -> None:
    run, handle = _shared_run("c-cancelled")
    seen: list[Any] = []
    closed = False

    async def events() -> AsyncIterator[ProgressEvent]:  # what the follower reads
        nonlocal closed
        try:
            async for event in handle.events():
                seen.append(event)
                if len(seen) == 3:
                    handle.cancel()  # the requester pressed Cancel
                yield event
        finally:
            closed = True

    async def engine() -> None:  # the run goes on for the other requester
        n = 0
        while True:
            n += 1
            run.push(_event(n))
            while len(seen) < n:
                await asyncio.sleep(0.01)

    pushing = asyncio.create_task(engine())
    try:
        async with asyncio.timeout(10):
            await follow_progress(events(), _shown_nowhere, 0)
    finally:
        pushing.cancel()
    assert seen[:3] == [_event(1), _event(2), _event(3)] and len(seen) <= 4
    assert closed  # the run's event stream was let go
    assert not run.done.done()  # and the run itself goes on


async def test_progress_ends_with_the_events_when_they_end_first() -> None:
    run, handle = _shared_run("c-finished")
    seen: list[Any] = []

    async def events() -> AsyncIterator[ProgressEvent]:
        async for event in handle.events():
            seen.append(event)
            yield event

    async def engine() -> None:  # two steps, then the run ends
        for n in (1, 2):
            run.push(_event(n))
            await asyncio.sleep(0.01)
        run.done.set_exception(CheckFailedError("the engine stopped"))

    pushing = asyncio.create_task(engine())
    async with asyncio.timeout(10):
        await follow_progress(events(), _shown_nowhere, 0)
    await pushing
    assert seen == [_event(1), _event(2)] and not handle.done


def test_a_chat_posting_as_itself_is_its_own_requester() -> None:
    """Anonymous admins, channels and linked-channel forwards all come "from" one of
    Telegram's shared service accounts; each chat must count as itself, not as that."""
    import datetime as dt

    from telegram import Chat, Message, User

    from bots.telegram.inputs import asker_of

    when = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)
    anonymous = User(1087968824, "Group", is_bot=True, username="GroupAnonymousBot")
    seen = {
        asker_of(
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
    assert asker_of(Message(2, when, Chat(-1001, "supergroup"), from_user=person)) == 42
