"""Corrections in a queued deployment: a ``correct`` job per platform, run by a bot replica.

When a review, or a finished ``--recheck`` of the same text, changes the verdict of a
check whose cards were shown (or a card is recorded that shows a verdict already
changed), one ``correct`` job is queued, in the
same transaction, on the deliver queue of each platform with cards due
(:func:`queue_corrections`). Whichever bot replica of that platform takes it edits the
cards and tells each chat once (:func:`register_correct_tasks`); jobs of one check never
run at once, and at most one waits per check and platform.

A chat whose send failed for a passing reason (a 429, a 5xx, a timeout) waits for its
next try, a minute later at first and longer after each failure
(:mod:`storage.shown_cards`); the job that failed to send ends there. A periodic job of
each platform looks for the checks whose cards are due now, every
``queue.corrections_poll_s``, and queues their ``correct`` jobs
(:func:`queue_due_corrections`): the one rule of "due" (the store's
:meth:`~storage.shown_cards.ShownCards.due_checks`, on the store's clock) brings them
back, as the local mode's poll does. It was chosen over a ``correct`` job scheduled at
the earliest retry time: such a job would wait in the queue holding the check's
queueing lock, so a newer review's job could not be queued before it and would wait
its hour; it would compare the retry time with the database server's clock rather
than the store's; and a correction whose job was lost (its attempts spent, deleted, or
never queued because no bot had set up the queue yet) would wait for the next review.
The look costs one indexed query per platform each round, whatever the replicas
(Procrastinate defers each round's job once).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable

from procrastinate import App, RetryStrategy

from storage.postgres import PostgresDatabase
from storage.sql import first_row
from storage.store import CheckStore

from ..settings import QueueSettings
from .jobs import CORRECT_DUE_TASK, CORRECT_TASK, cron_every, defer, deliver_queue

__all__ = [
    "ATTEMPTS",
    "DUE_BATCH",
    "Correct",
    "queue_corrections",
    "queue_due_corrections",
    "register_correct_tasks",
]

log = logging.getLogger(__name__)

#: runs a correct job gets in all, when it raises (the store failed it)
ATTEMPTS = 5
#: checks with corrections due queued per round of the periodic look (the rest: the next)
DUE_BATCH = 100

#: what a bot does with a correct job: tell the chats of one check; ``False`` when some
#: are left to try again later
Correct = Callable[[str], Awaitable[bool]]


def queue_corrections(db: PostgresDatabase, check_id: str, platforms: Iterable[str]) -> None:
    """Queue the ``correct`` job of original check ``check_id`` for each platform, in the
    caller's write transaction (a job already waiting for it does instead). A store
    whose job queue was never set up (no bot has run on it) has no bot to take them:
    nothing is queued, and the first bot's periodic look finds them."""
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


def queue_due_corrections(store: CheckStore, platform: str, *, limit: int = DUE_BATCH) -> list[str]:
    """Queue the ``correct`` job of every check with cards due on ``platform`` now (not
    waiting for a retry, by the store's clock), ``limit`` at most, in one write
    transaction (blocking); with none due, one read and no write.

    Returns:
        The checks whose jobs were queued (or were waiting already).
    """
    due = store.shown_cards.due_checks(platform, limit=limit)
    if due:
        with store.write():
            for check_id in due:
                queue_corrections(store.postgres(), check_id, [platform])
    return due


def register_correct_tasks(
    app: App, store: CheckStore, platform: str, correct: Correct, settings: QueueSettings
) -> None:
    """The ``correct`` jobs of ``platform``, taken by its bot processes with their
    deliveries (the same queue), and the periodic look that queues them for the
    corrections due again (every ``settings.corrections_poll_s``).

    Raises:
        StorageError: the store is on SQLite.
    """
    store.postgres()  # the queued mode only

    @app.task(
        name=CORRECT_TASK,
        queue=deliver_queue(platform),
        retry=RetryStrategy(max_attempts=ATTEMPTS - 1, wait=2, exponential_wait=2),
    )
    async def correct_job(check_id: str) -> None:
        if not await correct(check_id):  # a retry now would find nothing due yet
            log.info("check %s: some chats wait for their next try of its correction", check_id)

    # One look per round across every replica of the platform (the periodic id names
    # the platform: each platform's bots look for their own).
    @app.periodic(cron=cron_every(settings.corrections_poll_s), periodic_id=platform)
    @app.task(
        name=CORRECT_DUE_TASK,
        queue=deliver_queue(platform),
        queueing_lock=f"correct-due:{platform}",
    )
    async def correct_due(timestamp: int) -> None:
        queued = await asyncio.to_thread(queue_due_corrections, store, platform)
        if queued:
            log.info("%d checks with corrections due on %s queued", len(queued), platform)
