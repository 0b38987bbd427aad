"""A request's admission, as the service's front door holds it
(:meth:`bots.service.checks.CheckService.take`): released when its block ends, and
released even when its caller was cancelled while the admission was still being written
on a store thread. An attempt left open would hold a
place in its sender's private line for 30 minutes (``[service] private_queue``), so the
sender's next posts would be refused for nothing."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import pytest

from tests.peers.fakes.fake_checker import FakeChecker, fake_service

from bots.app.settings import Settings
from bots.service.checks import CheckService
from bots.service.records import Message, Requester
from storage import RequestScope

ANN = Requester("telegram", "731", "731", private=True)
POST = Message("The mayor of Springfield has banned bicycles from every street in the city.")


def _settings(folder: Path) -> Settings:
    return Settings.model_validate(
        {"storage": {"path": str(folder / "zofia.db"), "secret": "s3cret-for-tests-only"}}
    )


def _attempts(service: CheckService, *, open_only: bool = False) -> int:
    """The sender's attempts (``open_only``: those still open in a private chat)."""
    requester = service.namer.user(ANN.platform, ANN.user_id)
    since = service.clock() - dt.timedelta(hours=1)
    attempts = service.store.attempts
    return attempts.count(RequestScope(since, requester), open_in_private=open_only)


def _open(service: CheckService) -> int:
    return _attempts(service, open_only=True)


async def _until_written_and_closed(service: CheckService) -> None:
    """Return once the sender's attempt is written and no attempt of theirs is open; a
    bounded wait (both run on store threads), failing the test after 10 s."""
    async with asyncio.timeout(10):
        while _attempts(service) < 1 or _open(service):
            await asyncio.sleep(0.01)


async def test_an_admission_is_released_when_its_block_ends(tmp_path: Path) -> None:
    async with fake_service(_settings(tmp_path), FakeChecker()) as service:
        async with service.take(POST, ANN) as handle:
            assert _open(service) == 1
            await handle.result()
        assert _open(service) == 0
        with pytest.raises(RuntimeError, match="the card failed"):
            async with service.take(POST, ANN):
                raise RuntimeError("the card failed")
        assert _open(service) == 0


async def test_an_admission_that_lands_after_its_caller_left_is_released(
    tmp_path: Path,
) -> None:
    async with fake_service(_settings(tmp_path), FakeChecker()) as service:
        entered: list[bool] = []

        async def request() -> None:
            async with service.take(POST, ANN):
                entered.append(True)

        with service.store.write():  # the admission waits on its store thread for this
            task = asyncio.create_task(request())
            for _ in range(10):  # the post read, the admission handed to its store thread
                await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        # Written once the store was free, after its caller had gone: released then.
        await _until_written_and_closed(service)
        assert entered == [] and _attempts(service) == 1
