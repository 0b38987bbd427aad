"""``run_jobs`` ends when it is cancelled, whatever Procrastinate's worker raises on its
way out; it restarts the worker only when the worker stopped or failed on its own.

A real PostgreSQL server and a Procrastinate app in this process. ``bench/scale.py``
once left ``app.open_async()`` on an error while the deliver consumer still ran: the
app closed under the worker, and cancelling the consumer made Procrastinate's shutdown
raise ``AppNotOpen``, which ``run_jobs`` took for a failure, restarting the worker
every 1 to 30 s until the process was killed.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from procrastinate import App

from bots.app.settings import Settings
from bots.service.queue.jobs import ensure_schema, make_app
from bots.service.queue.worker import run_jobs
from storage.postgres import PostgresDatabase
from storage.sql import first_row

pytestmark = pytest.mark.slow  # a real PostgreSQL server on loopback

#: how long a cancelled run_jobs is waited for before the test calls it stuck (it ends
#: well under a second; the old loop never ended): a bound against a hang, not a timing
END_BOUND_S = 10.0


def settings_for(url: str) -> Settings:
    return Settings.model_validate(
        {
            "storage": {"url": url, "secret": "run-jobs-test-secret-0123456789"},
            "queue": {"heartbeat_s": 1.0, "stalled_after_s": 3.0, "poll_s": 0.5},
        }
    )


async def registered_workers(db: PostgresDatabase) -> int:
    row = await asyncio.to_thread(db.execute, "SELECT count(*) FROM procrastinate_workers")
    return int(first_row(row)[0])


async def started_worker(app: App, settings: Settings, db: PostgresDatabase) -> asyncio.Task[None]:
    """``run_jobs`` in a task, once its worker has registered in the database."""
    jobs = asyncio.create_task(run_jobs(app, ["checks"], settings.queue, concurrency=1, name="t"))
    deadline = time.monotonic() + 20
    while await registered_workers(db) == 0:
        assert not jobs.done(), jobs
        assert time.monotonic() < deadline, "the worker never registered"
        await asyncio.sleep(0.05)
    return jobs


async def ended_within(jobs: asyncio.Task[None], bound_s: float) -> bool:
    """Whether ``jobs`` ended within ``bound_s``; stops it (bounded) if not."""
    done, _ = await asyncio.wait({jobs}, timeout=bound_s)
    if not done:  # the old loop: a second cancel lands in its pause between restarts
        for _ in range(10):
            jobs.cancel()
            if (await asyncio.wait({jobs}, timeout=5))[0]:
                break
    return bool(done)


async def test_a_cancelled_run_jobs_ends_while_its_app_closes(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings = settings_for(postgres_url)
    db = PostgresDatabase(postgres_url)
    ensure_schema(db)
    app = make_app(postgres_url)
    try:
        async with app.open_async():
            jobs = await started_worker(app, settings, db)
        # The app closed under the running worker; its shutdown now raises AppNotOpen.
        jobs.cancel()  # once: the old loop went on restarting the worker until killed
        assert await ended_within(jobs, END_BOUND_S), "run_jobs went on after its cancel"
        assert jobs.cancelled()
        restarts = [r.getMessage() for r in caplog.records if "restarting" in r.getMessage()]
        assert restarts == []
    finally:
        db.close()


async def test_a_cancelled_run_jobs_ends_on_an_open_app(postgres_url: str) -> None:
    settings = settings_for(postgres_url)
    db = PostgresDatabase(postgres_url)
    ensure_schema(db)
    app = make_app(postgres_url)
    try:
        async with app.open_async():
            jobs = await started_worker(app, settings, db)
            jobs.cancel()
            assert await ended_within(jobs, END_BOUND_S)
            assert jobs.cancelled()
            assert await registered_workers(db) == 0  # it unregistered on its way out
    finally:
        db.close()
