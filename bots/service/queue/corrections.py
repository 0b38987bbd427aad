"""Corrections in a queued deployment: a ``correct`` job per platform, run by a bot replica.

When a review, or a finished ``--recheck`` of the same text, changes the verdict of a
check whose cards were shown (or a card is recorded that shows a verdict already
changed), one ``correct`` job is queued, in the
same transaction, on the deliver queue of each platform with cards due
(:func:`queue_corrections`). Whichever bot replica of that platform takes it edits the
cards and tells each chat once (:func:`register_correct_task`); jobs of one check never
run at once, and at most one waits per check and platform. A job whose chats could not
all be told fails and is tried again, up to :data:`ATTEMPTS` times.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from procrastinate import App, RetryStrategy

from storage.postgres import PostgresDatabase
from storage.sql import first_row

from .jobs import CORRECT_TASK, defer, deliver_queue

__all__ = [
    "ATTEMPTS",
    "Correct",
    "CorrectionsLeftError",
    "queue_corrections",
    "register_correct_task",
]

#: runs a correct job gets in all
ATTEMPTS = 5

#: what a bot does with a correct job: tell the chats of one check; ``False`` when some
#: are left to try again
Correct = Callable[[str], Awaitable[bool]]


class CorrectionsLeftError(Exception):
    """Some chats could not be told this time; the job is tried again."""


def queue_corrections(db: PostgresDatabase, check_id: str, platforms: Iterable[str]) -> None:
    """Queue the ``correct`` job of original check ``check_id`` for each platform, in the
    caller's write transaction (a job already waiting for it does instead). A store
    whose job queue was never set up (no bot has run on it) has no bot to take them:
    nothing is queued."""
    (ready,) = first_row(db.execute("SELECT to_regclass('procrastinate_jobs') IS NOT NULL"))
    if not ready:
        return
    for platform in platforms:
        key = f"correct:{platform}:{check_id}"
        defer(
            db,
            CORRECT_TASK,
            deliver_queue(platform),
            {"check_id": check_id},
            lock=key,
            queueing_lock=key,
        )


def register_correct_task(app: App, platform: str, correct: Correct) -> None:
    """The ``correct`` jobs of ``platform``, taken by its bot processes with their
    deliveries (the same queue)."""

    @app.task(
        name=CORRECT_TASK,
        queue=deliver_queue(platform),
        retry=RetryStrategy(max_attempts=ATTEMPTS - 1, wait=2, exponential_wait=2),
    )
    async def correct_job(check_id: str) -> None:
        if not await correct(check_id):
            raise CorrectionsLeftError(f"some chats of check {check_id} are left to tell")
