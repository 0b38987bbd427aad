"""The job queue: Procrastinate on the store's PostgreSQL.

Jobs are deferred with Procrastinate's own SQL function inside the store's write
transaction, so a check row and its job commit together or not at all (the library's
``defer`` would use a connection of its own). Workers take jobs with ``FOR UPDATE
SKIP LOCKED`` and wake on ``NOTIFY``; a job whose worker stopped sending heartbeats
is put back by :data:`RETRY_STALLED_TASK`.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg
from procrastinate import App, PsycopgConnector
from procrastinate.schema import SchemaManager

from storage.postgres import PostgresDatabase
from storage.sql import first_row
from storage.transaction import write_transaction

__all__ = [
    "CHECKS_QUEUE",
    "CHECK_TASK",
    "CORRECT_DUE_TASK",
    "CORRECT_TASK",
    "DELIVER_TASK",
    "MAINTENANCE_QUEUE",
    "RETRY_STALLED_TASK",
    "cron_every",
    "defer",
    "deliver_queue",
    "ensure_schema",
    "make_app",
    "queue_counts",
    "queue_depth",
]

CHECKS_QUEUE = "checks"
MAINTENANCE_QUEUE = "maintenance"
CHECK_TASK = "zofia.check"
DELIVER_TASK = "zofia.deliver"
#: a verdict a moderator changed, told to the chats that were shown it (bots.service.corrections)
CORRECT_TASK = "zofia.correct"
#: the periodic look for corrections due again after a failed send (bots.service.queue.corrections)
CORRECT_DUE_TASK = "zofia.correct_due"
RETRY_STALLED_TASK = "zofia.retry_stalled"
_QUEUEING_LOCK_INDEX = "procrastinate_jobs_queueing_lock_idx_v1"
_DEFER = (
    "SELECT unnest(procrastinate_defer_jobs_v1(ARRAY[ROW(?::varchar, ?::varchar, 0, ?::text,"
    " ?::text, ?::jsonb, NULL)::procrastinate_job_to_defer_v1])) AS id"
)
# Schema creation is not idempotent in Procrastinate: one process at a time creates it.
_SCHEMA_LOCK = 0x7A6F666971


def cron_every(seconds: float) -> str:
    """A periodic task's cron line (Procrastinate's, a sixth field for the seconds) that
    fires every ``seconds``, rounded to a whole second: at the seconds of each minute
    that divide by it, under a minute; every minute from a minute up."""
    whole = max(1, round(seconds))
    return f"* * * * * */{whole}" if whole < 60 else "* * * * *"


def deliver_queue(platform: str) -> str:
    """The queue only ``platform``'s bot processes take jobs from."""
    return f"deliver.{platform}"


def ensure_schema(db: PostgresDatabase) -> bool:
    """Create Procrastinate's tables in the store's database unless they exist.

    Returns:
        Whether this call created them.
    """
    with db.transaction():
        conn = db.current()
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
        row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
        if row is not None and row[0] is not None:
            return False
        conn.execute(SchemaManager.get_schema().encode())  # no parameters: sent as it is
    return True


def defer(
    db: PostgresDatabase,
    task: str,
    queue: str,
    args: dict[str, Any],
    *,
    lock: str | None = None,
    queueing_lock: str | None = None,
) -> int | None:
    """Queue one job in the caller's transaction (or in one of its own).

    Args:
        lock: jobs with the same lock never run at the same time.
        queueing_lock: at most one job with this lock waits in the queue.

    Returns:
        The job's id, or ``None`` when a job with the same ``queueing_lock`` is waiting
        already (the caller's transaction goes on: the attempt ran in a savepoint).
    """
    params = [queue, task, lock, queueing_lock, json.dumps(args)]
    try:
        with write_transaction(db):
            (job,) = first_row(db.execute(_DEFER, params))
    except psycopg.errors.UniqueViolation as exc:
        if exc.diag.constraint_name == _QUEUEING_LOCK_INDEX:
            return None
        raise
    return int(job)


def queue_depth(db: PostgresDatabase, queue: str = CHECKS_QUEUE) -> int:
    """Jobs of ``queue`` waiting or running."""
    (depth,) = first_row(
        db.execute(
            "SELECT count(*) FROM procrastinate_jobs WHERE queue_name = ?"
            " AND status IN ('todo', 'doing')",
            [queue],
        )
    )
    return int(depth)


def queue_counts(db: PostgresDatabase) -> list[tuple[str, str, int]]:
    """``(queue, status, jobs)`` for every queue with jobs waiting (``todo``) or running
    (``doing``): the ``zofia_queue_depth`` gauge."""
    rows = db.execute(
        "SELECT queue_name, status::text, count(*) FROM procrastinate_jobs"
        " WHERE status IN ('todo', 'doing') GROUP BY 1, 2 ORDER BY 1, 2"
    ).fetchall()
    return [(str(queue), str(status), int(count)) for queue, status, count in rows]


def make_app(url: str, *, max_connections: int = 4) -> App:
    """A Procrastinate app on the store's database (open it with ``open_async``)."""
    connector = PsycopgConnector(conninfo=url, min_size=1, max_size=max_connections)
    return App(connector=connector)
