"""No check is left running forever: a check job whose end of check fails on its last
attempt ends the check in a fresh transaction (or, when that fails too, fails visibly
and leaves the check to the sweep), and the sweep of the stalled-job task ends every
check queued or running that no job will end any more, with its joiners.

A real PostgreSQL server, the queued check service and a Procrastinate worker in this
process; :class:`~tests.peers.fakes.fake_checker.FakeChecker` checks. The end of a check is made to
fail as PostgreSQL fails it when the write lock is not free within ``lock_timeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from tests.bots.service.queue.test_queue import POST, asker, replica, settings_for
from tests.peers.fakes.fake_checker import FakeChecker, HashingEncoder, submit

from bots.app.settings import Settings
from bots.service.queue import ending
from bots.service.queue.ending import LEFT_UNFINISHED, sweep_unfinished
from bots.service.queue.jobs import make_app
from bots.service.queue.worker import CheckRunner, register_check_tasks, run_jobs
from bots.service.records import CheckFailedError
from storage.postgres import PostgresDatabase
from storage.store import CheckStore
from zofia_engine.errors import ZofiaError
from zofia_engine.post import Post

pytestmark = pytest.mark.slow  # a real PostgreSQL server on loopback


class EndFails(CheckRunner):
    """A runner whose end of check fails ``times`` times (``-1``: always) before it works."""

    def __init__(self, *args: Any, times: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.times = times
        self.tries = 0

    def end(self, check_id: str, error: str | None) -> None:
        self.tries += 1
        if self.times:
            self.times -= 1
            raise psycopg.errors.LockNotAvailable("canceling statement due to lock timeout")
        super().end(check_id, error)


@contextlib.asynccontextmanager
async def worker_of(
    settings: Settings, checker: FakeChecker, *, end_fails: int
) -> AsyncIterator[EndFails]:
    """A Procrastinate worker taking check jobs (and the stalled-job task) in this process."""
    db = PostgresDatabase(settings.storage.url)
    runner = EndFails(checker, CheckStore(db), HashingEncoder(), times=end_fails)
    app = make_app(settings.storage.url)
    register_check_tasks(app, runner, settings.queue)
    async with app.open_async():
        taking = run_jobs(app, ["checks"], settings.queue, concurrency=2, name="t")
        jobs = asyncio.create_task(taking)
        try:
            yield runner
        finally:
            jobs.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await jobs
    runner.close()
    db.close()


def statuses(store: CheckStore) -> dict[str, int]:
    rows = store.db.execute("SELECT status, count(*) FROM checks GROUP BY status").fetchall()
    return {str(status): int(count) for status, count in rows}


def job_statuses(store: CheckStore) -> list[str]:
    rows = store.db.execute(
        "SELECT status::text FROM procrastinate_jobs WHERE task_name = 'zofia.check'"
    ).fetchall()
    return [str(status) for (status,) in rows]


@pytest.mark.parametrize("engine_fails", [True, False], ids=["engine-failed", "engine-done"])
async def test_an_end_that_fails_on_the_last_attempt_is_tried_again_fresh(
    postgres_url: str, engine_fails: bool, caplog: pytest.LogCaptureFixture
) -> None:
    settings = settings_for(postgres_url, max_attempts=1)  # the first attempt is the last
    fail = ZofiaError("the search API refused every call") if engine_fails else None
    checker = FakeChecker(fail=fail)
    async with replica(settings, checker) as service:
        first = await submit(service, Post(text=POST), asker(1))
        joined = await submit(service, Post(text=POST.upper()), asker(2))  # joins the first
        async with worker_of(settings, checker, end_fails=1) as runner:
            for handle in (first, joined):
                if engine_fails:
                    with pytest.raises(CheckFailedError, match="search API refused"):
                        await asyncio.wait_for(handle.result(), 20)
                else:
                    await asyncio.wait_for(handle.result(), 20)
        assert runner.tries == 2  # the end inside the run, then one in a fresh transaction
        ended = "failed" if engine_fails else "done"
        assert statuses(service.store) == {ended: 2}
    assert "giving up after 1 attempts" in caplog.text


async def test_a_check_that_cannot_be_ended_fails_its_job_and_is_swept(
    postgres_url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(postgres_url, max_attempts=1)
    checker = FakeChecker(fail=ZofiaError("the search API refused every call"))
    async with replica(settings, checker) as service:
        store = service.store
        first = await submit(service, Post(text=POST), asker(1))
        joined = await submit(service, Post(text=POST.upper()), asker(2))
        async with worker_of(settings, checker, end_fails=-1) as runner:
            async with asyncio.timeout(20):
                while job_statuses(store) != ["failed"]:  # not retried: one attempt in all
                    await asyncio.sleep(0.1)
            # The job failed where `zofia queue` shows it, and said why in the log; the
            # check it could not end is still running, its joiner still waiting.
            assert runner.tries == 3
            assert statuses(store) == {"running": 1, "queued": 1}
            assert "left for the sweep of unfinished checks" in caplog.text
            # The stalled-job task's sweep ends them (the bound made nought for the test),
            # and the waiters get the sentence.
            monkeypatch.setattr(ending, "UNFINISHED_AFTER", dt.timedelta(0))
            for handle in (first, joined):
                with pytest.raises(CheckFailedError, match="left unfinished"):
                    await asyncio.wait_for(handle.result(), 20)
        assert statuses(store) == {"failed": 2}
        row = store.checks.get(first.check_id)
        assert row is not None and row.error == LEFT_UNFINISHED


async def test_the_sweep_passes_over_checks_a_job_will_end_and_recent_ones(
    postgres_url: str,
) -> None:
    settings = settings_for(postgres_url)
    async with replica(settings, FakeChecker()) as service:
        store = service.store
        waiting = await submit(service, Post(text=POST), asker(1))  # its job waits (no worker)
        db = store.db
        assert isinstance(db, PostgresDatabase)
        orphan = store.checks.create(
            platform="test", chat="c", requester="r", post=Post(text="Orphan."), text_hash="o"
        )
        store.checks.set_status(orphan.id, "running")
        assert sweep_unfinished(store, db) == []  # too recent for the bound
        assert sweep_unfinished(store, db, older_than=dt.timedelta(0)) == [orphan.id]
        assert store.checks.get(orphan.id).status == "failed"  # type: ignore[union-attr]
        assert store.checks.get(waiting.check_id).status == "queued"  # type: ignore[union-attr]
