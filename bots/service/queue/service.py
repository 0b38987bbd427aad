"""The queued mode of the check service: checks run on worker processes.

:class:`QueuedDelivery` is the :class:`~bots.service.card_delivery.CardDelivery` that
:class:`~bots.service.checks.CheckService` consults on PostgreSQL. The service answers
repeats from the store as always; otherwise, in one write transaction (one lock
across every process on the database), it either joins the check of the same text
already queued or running, or writes a new check and this queues its job. Twenty
replicas receiving one viral post start one engine run. Requesters in this process
wait on events the worker publishes; the card itself is posted by a ``deliver`` job
(:meth:`QueuedDelivery.expect`), so a replica that dies while its users wait loses
no answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from typing import Any

from storage.store import CheckStore
from zofia_engine.post import ProgressEvent

from ..handles import Run
from ..records import CheckFailedError, Outcome
from .events import CheckEvent, Listener
from .jobs import (
    CHECK_TASK,
    CHECKS_QUEUE,
    DELIVER_TASK,
    defer,
    deliver_queue,
    ensure_schema,
    queue_depth,
)

__all__ = ["QueuedDelivery", "stored_outcome"]

log = logging.getLogger(__name__)

#: how long :meth:`QueuedDelivery.start` waits for the event listener
LISTEN_WAIT_S = 10.0
#: after this, a card not delivered is given up and its chat ids are blanked
STALE_DELIVERY = dt.timedelta(days=1)
#: how often waiting requesters' checks are read from the store, should an event be lost
POLL_S = 15.0


def stored_outcome(store: CheckStore, check_id: str) -> Outcome | str | None:
    """What a finished check answers: its outcome (with a moderator's latest review in
    force), the reason it failed, or ``None`` (unknown, cancelled, not finished, or its
    report purged)."""
    row = store.checks.get(check_id)
    if row is None:
        return None
    original = store.checks.get(row.repeat_of) if row.repeat_of else row
    if original is None:
        return None
    if row.status == "failed" or original.status == "failed":
        return f"The check failed: {(row.error or original.error) or 'no reason was stored'}"
    if original.status != "done":
        return None
    # The latest review in force in the chat that asked (its moderators', or the service's).
    report = store.reviewed_report(original.id, (row.platform, row.chat) if row.chat else None)
    if report is None:
        return None
    if row.repeat_of is None:
        return Outcome(row.id, report)
    return Outcome(row.id, report, row.repeat_kind or "exact", original.id, original.created_at)


class QueuedDelivery:
    """Checks run by ``zofia worker`` processes through the job queue in the store's
    PostgreSQL, followed here by their events, and cards posted by deliver jobs.

    Args:
        store: the store, on PostgreSQL.

    Raises:
        StorageError: the store is on SQLite.
    """

    def __init__(self, store: CheckStore) -> None:
        db = store.postgres()
        self.store = store
        self.db = db
        self._runs: dict[str, Run] = {}
        self._listener = Listener(db.url, self._on_event, self._catch_up)
        self._tasks: list[asyncio.Task[None]] = []
        self._settling: set[asyncio.Task[None]] = set()
        self._ending: set[str] = set()

    async def start(self) -> None:
        """Create the queue's schema if needed and listen for the workers' events."""
        await asyncio.to_thread(ensure_schema, self.db)
        self._tasks = [
            asyncio.create_task(self._listener.run(), name="zofia-events"),
            asyncio.create_task(self._poll(), name="zofia-event-poll"),
        ]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LISTEN_WAIT_S):
                await self._listener.connected.wait()

    async def aclose(self) -> None:
        """Stop listening; checks go on on the workers, and their cards are delivered."""
        for task in [*self._tasks, *self._settling]:
            task.cancel()
        for task in [*self._tasks, *self._settling]:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for run in self._runs.values():
            run.done.cancel()
        self._runs.clear()

    def forget_stale(self, now: dt.datetime) -> None:
        """Blank the chat ids of deliveries that never happened and are a day old (their
        jobs gave up), rather than keep them for the retention."""
        self.store.deliveries.forget_stale(now - STALE_DELIVERY)

    def pending(self) -> int:
        return queue_depth(self.db)

    def queue(self, check_id: str, text_key: str | None) -> None:
        job = defer(
            self.db,
            CHECK_TASK,
            CHECKS_QUEUE,
            {"check_id": check_id},
            queueing_lock=None if text_key is None else f"check:{text_key}",
        )
        if job is None:  # a job of this text waits, yet no check of it is in flight
            key = (text_key or "")[:12]
            raise RuntimeError(f"the queue holds a job for text {key}… but no check")

    def run_of(self, check_id: str, created_at: dt.datetime) -> Run:
        run = self._runs.get(check_id)
        if run is None:
            run = self._runs[check_id] = Run(check_id, created_at)
        return run

    def drop(self, check_id: str) -> None:
        """Nobody waits for ``check_id``'s card any more: its delivery is deleted, off the
        event loop when called on it (a requester's Cancel)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.store.deliveries.drop(check_id)
            return
        task = loop.create_task(self._drop(check_id))
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

    async def _drop(self, check_id: str) -> None:
        try:
            await asyncio.to_thread(self.store.deliveries.drop, check_id)
        except Exception:  # the card is posted after all; nothing is lost
            log.warning("could not drop the delivery of check %s", check_id, exc_info=True)

    async def expect(self, check_id: str, platform: str, target: dict[str, Any]) -> None:
        """Have ``check_id``'s card posted at ``target`` (the platform's chat and message
        ids) by whichever bot replica runs its ``deliver`` job."""
        await asyncio.to_thread(self._expect, check_id, platform, target)

    def _expect(self, check_id: str, platform: str, target: dict[str, Any]) -> None:
        with self.store.write():
            if self.store.deliveries.expect(check_id, platform, target):  # ended meanwhile
                defer(
                    self.db,
                    DELIVER_TASK,
                    deliver_queue(platform),
                    {"check_id": check_id},
                    lock=f"deliver:{check_id}",
                    queueing_lock=f"deliver:{check_id}",
                )

    def settle_soon(self, check_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._settle_from_store(check_id))
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

    # -- events -----------------------------------------------------------------------------

    def _on_event(self, event: CheckEvent) -> None:
        run = self._runs.get(event.check_id)
        if run is None:
            return
        if event.kind == "progress":
            if event.check_id not in self._ending:
                with contextlib.suppress(ValueError):
                    run.push(ProgressEvent.model_validate(event.event))
            return
        self._ending.add(event.check_id)  # no more progress edits: the card is coming
        self.settle_soon(event.check_id)

    async def _settle_from_store(self, check_id: str) -> None:
        """Settle the local run of ``check_id`` if the store says it has ended."""
        run = self._runs.get(check_id)
        if run is None or run.done.done():
            return
        found = await asyncio.to_thread(stored_outcome, self.store, check_id)
        if found is None or run.done.done():
            return
        if isinstance(found, str):
            run.done.set_exception(CheckFailedError(found))
        else:
            run.done.set_result(found)
        self._runs.pop(check_id, None)
        self._ending.discard(check_id)
        run.changed.set()

    async def _catch_up(self) -> None:
        for check_id in list(self._runs):
            await self._settle_from_store(check_id)

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_S)
            with contextlib.suppress(Exception):
                await self._catch_up()
