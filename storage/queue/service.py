"""The check service when checks run on worker processes.

``submit`` answers repeats from the store as :class:`~storage.service.CheckService`
does; otherwise, in one write transaction (one lock across every process on the
database), it either joins the check of the same text already queued or running,
or writes a new check and its job. Twenty replicas receiving one viral post start one
engine run. Requesters in this process wait on events the worker publishes; the card
itself is posted by a ``deliver`` job (:meth:`expect_delivery`), so a replica that
dies while its users wait loses no answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from zofia_engine.post import Post, ProgressEvent

from ..deliveries import Deliveries
from ..handles import CheckFailedError, CheckHandle, Outcome, Run
from ..limits import refuse_if_full
from ..postgres import PostgresDatabase
from ..service import CheckService
from ..store import CheckRow, CheckStore
from ..transaction import write_transaction
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

__all__ = ["QueuedCheckService", "in_flight", "stored_outcome"]

log = logging.getLogger(__name__)

#: how long :meth:`QueuedCheckService.start` waits for the event listener
LISTEN_WAIT_S = 10.0
#: after this, a card not delivered is given up and its chat ids are blanked
STALE_DELIVERY = dt.timedelta(days=1)
#: how often waiting requesters' checks are read from the store, should an event be lost
POLL_S = 15.0


def in_flight(store: CheckStore, digest: str) -> CheckRow | None:
    """The original check of this text key still queued or running, if any."""
    found = store._checks(
        "SELECT * FROM checks WHERE text_hash = ? AND repeat_of IS NULL"
        " AND status IN ('queued', 'running') ORDER BY created_at DESC, rowid DESC LIMIT 1",
        [digest],
    )
    return found[0] if found else None


def stored_outcome(store: CheckStore, check_id: str) -> Outcome | str | None:
    """What a finished check answers: its outcome, the reason it failed, or ``None``
    (unknown, cancelled, not finished, or its report purged)."""
    row = store.get_check(check_id)
    if row is None:
        return None
    original = store.get_check(row.repeat_of) if row.repeat_of else row
    if original is None:
        return None
    if row.status == "failed" or original.status == "failed":
        return f"The check failed: {(row.error or original.error) or 'no reason was stored'}"
    if original.status != "done":
        return None
    report = store.get_report(original.id)
    if report is None:
        return None
    if row.repeat_of is None:
        return Outcome(row.id, report)
    return Outcome(row.id, report, row.repeat_kind or "exact", original.id, original.created_at)


class QueuedCheckService(CheckService):
    """A :class:`~storage.service.CheckService` whose engine runs on ``zofia worker``
    processes, through the job queue in the store's PostgreSQL.

    The ``checker`` is used here only to read pictures before a post is keyed; the
    encoder to find near repeats. Takes the same arguments as the base class.
    """

    delivers_cards = True  # see CheckService

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        db = self.store.db
        if not isinstance(db, PostgresDatabase):
            raise TypeError("a queued check service needs the store on PostgreSQL")
        self.db = db
        self.deliveries = Deliveries(self.store)
        self._runs: dict[str, Run] = {}
        self._listener = Listener(db.url, self._on_event, self._catch_up)
        self._tasks: list[asyncio.Task[None]] = []
        self._settling: set[asyncio.Task[None]] = set()
        self._ending: set[str] = set()

    async def start(self, *, resume: bool = True) -> list[str]:
        """Load the near-repeat index and listen for the workers' events. Nothing is
        resumed here: a check whose worker died is the queue's to retry."""
        await asyncio.to_thread(ensure_schema, self.db)
        await self.repeats.load(since=self.clock() - self.window)
        await asyncio.to_thread(self.purge_expired)
        self._tasks = [
            asyncio.create_task(self._listener.run(), name="zofia-events"),
            asyncio.create_task(self._poll(), name="zofia-event-poll"),
        ]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LISTEN_WAIT_S):
                await self._listener.connected.wait()
        return []

    async def aclose(self) -> None:
        """Stop listening; checks go on on the workers, and their cards are delivered."""
        self._closing = True
        for task in [*self._tasks, *self._settling]:
            task.cancel()
        for task in [*self._tasks, *self._settling]:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for run in self._runs.values():
            run.done.cancel()
        self._runs.clear()

    def purge_expired(self) -> int:
        """As the base class; also blank the chat ids of deliveries that never happened
        and are a day old (their jobs gave up), rather than keep them for the retention."""
        self.deliveries.forget_stale(self.clock() - STALE_DELIVERY)
        return super().purge_expired()

    async def expect_delivery(self, check_id: str, platform: str, target: dict[str, Any]) -> None:
        """Have ``check_id``'s card posted at ``target`` (the platform's chat and message
        ids) by whichever bot replica runs its ``deliver`` job."""
        await asyncio.to_thread(self._expect, check_id, platform, target)

    def _expect(self, check_id: str, platform: str, target: dict[str, Any]) -> None:
        with self.store._lock, write_transaction(self.db):
            if self.deliveries.expect(check_id, platform, target):  # ended meanwhile
                defer(self.db, DELIVER_TASK, deliver_queue(platform), {"check_id": check_id})

    # -- deciding ---------------------------------------------------------------------------

    async def _decide(
        self,
        post: Post,
        text: str,
        digest: str,
        record: Callable[..., CheckRow],
        now: dt.datetime,
        recheck: bool,
    ) -> CheckHandle:
        if not recheck:
            answered, _ = await self._from_store(post, text, digest, record, now)
            if answered is not None:
                return answered
        row, original = await asyncio.to_thread(self._join_or_queue, digest, record, recheck, now)
        return self._follow(row, original)

    def _join_or_queue(
        self, digest: str, record: Callable[..., CheckRow], recheck: bool, now: dt.datetime
    ) -> tuple[CheckRow, CheckRow]:
        """Under the store's write lock: join the run of this text, or queue a new one."""
        with self.store._lock, write_transaction(self.db):
            running = None if recheck else in_flight(self.store, digest)
            if running is not None:
                return record(repeat_of=running.id, repeat_kind="exact"), running
            refuse_if_full(self.store, self.settings, queue_depth(self.db), now)
            row = record(forced=recheck)
            job = defer(
                self.db,
                CHECK_TASK,
                CHECKS_QUEUE,
                {"check_id": row.id},
                queueing_lock=None if recheck else f"check:{digest}",
            )
            if job is None:  # a job of this text waits, yet no check of it is in flight
                raise RuntimeError(f"the queue holds a job for text {digest[:12]}… but no check")
            return row, row

    def _follow(self, row: CheckRow, original: CheckRow) -> CheckHandle:
        """A handle on ``row`` that settles when ``original``'s run ends on a worker."""
        run = self._runs.get(original.id)
        if run is None:
            run = self._runs[original.id] = Run(original.id, original.created_at)

        def answer(result: Outcome) -> Outcome:
            if row.id == original.id:
                return result
            return Outcome(row.id, result.report, "exact", original.id, original.created_at, 1.0)

        # The worker keeps every row's status (a replica shutting down cancels nothing);
        # a requester who leaves only gives up the card.
        handle = self._wait_on(
            run, row.id, answer, own_row=True, on_leave=lambda: self.deliveries.drop(row.id)
        )
        # It may have ended before this process began to listen for it.
        self._settle_soon(original.id)
        return handle

    def _settle_soon(self, check_id: str) -> None:
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
        self._settle_soon(event.check_id)

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
