"""The queued mode of the check service: checks run on worker processes.

:class:`QueuedDelivery` is the :class:`~bots.service.delivery.CardDelivery` of a store
on PostgreSQL. A repeat is answered from the store as always; otherwise, in one write
transaction (one lock across every process on the database), a request either joins the
check of the same text already queued or running, or writes a new check and its job.
Twenty replicas receiving one viral post start one engine run. Requesters in this
process wait on events the worker publishes; the card itself is posted by a ``deliver``
job (:meth:`QueuedDelivery.expect`), so a replica that dies while its users wait loses
no answer. While a bot serves (:meth:`QueuedDelivery.serving`) it takes its platform's
``deliver`` and ``correct`` jobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
import socket
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from storage.other_chats import run_key
from storage.rows import CheckRow
from zofia_engine.post import ProgressEvent

from ..corrections import correct
from ..delivery import Intake, Parts, PostCard, Probes
from ..handles import CheckHandle, Run, joined
from ..records import CheckFailedError, Failed, SendCorrection
from ..settings import QueueSettings
from ..shown import card_state
from ..stored_answers import answer_from_store
from . import metrics
from .corrections import queue_corrections, register_correct_tasks
from .events import CheckEvent, Listener
from .jobs import (
    CHECK_TASK,
    CHECKS_QUEUE,
    DELIVER_TASK,
    defer,
    deliver_queue,
    ensure_schema,
    make_app,
    queue_depth,
)
from .worker import register_deliver_task, run_jobs

__all__ = ["DELIVERY_CONCURRENCY", "QueuedDelivery"]

log = logging.getLogger(__name__)

#: how long :meth:`QueuedDelivery.start` waits for the event listener
LISTEN_WAIT_S = 10.0
#: after this, a card not delivered is given up and its chat ids are blanked
STALE_DELIVERY = dt.timedelta(days=1)
#: how often waiting requesters' checks are read from the store, should an event be lost
POLL_S = 15.0


#: cards one bot process posts at once (each is one or two platform API calls)
DELIVERY_CONCURRENCY = 8


class QueuedDelivery:
    """Checks run by ``zofia worker`` processes through the job queue in the store's
    PostgreSQL, followed here by their events, and cards posted by deliver jobs.

    Args:
        parts: the service's parts; its store on PostgreSQL.
        queue: the ``[queue]`` section.

    Raises:
        StorageError: the store is on SQLite.
    """

    def __init__(self, parts: Parts, queue: QueueSettings) -> None:
        self.parts = parts
        self.settings = queue
        self.store = store = parts.store
        self.db = db = store.postgres()
        self._runs: dict[str, Run] = {}
        self._listener = Listener(db.url, self._on_event, self._catch_up)
        self._tasks: list[asyncio.Task[None]] = []
        self._settling: set[asyncio.Task[None]] = set()
        self._ending: set[str] = set()

    async def start(self, *, resume: bool) -> list[str]:
        """Create the queue's schema if needed and listen for the workers' events. Nothing
        is resumed here: a check whose worker died is the queue's to retry."""
        await asyncio.to_thread(ensure_schema, self.db)
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

    def queue_due(self, due: dict[str, list[str]]) -> None:
        """A ``correct`` job for each original check and platform with cards due."""
        for original_id, platforms in due.items():
            queue_corrections(self.db, original_id, platforms)

    async def submit(self, intake: Intake) -> CheckHandle:
        """Answer from the store, else join the run of this text on the workers or queue
        a new one; either way follow that run from here."""
        if not intake.recheck:
            answered, _ = await answer_from_store(self.parts, intake)
            if answered is not None:
                return answered
        row, original = await self.parts.threads.run(self._join_or_queue, intake)
        # The worker keeps every row's status (a replica shutting down cancels nothing);
        # a requester who leaves only gives up the card.
        handle = self.parts.waiters.wait_on(
            self._run_of(original.id, original.created_at),
            row.id,
            joined(row, original),
            own_row=True,
            on_leave=partial(self.drop, row.id),
            delivered_elsewhere=True,
        )
        self.settle_soon(original.id)  # it may have ended before this process listened
        return handle

    def _join_or_queue(self, intake: Intake) -> tuple[CheckRow, CheckRow]:
        """In one write transaction (one lock across every process on the database): join
        the check of this text queued or running, or write a new check and its job."""
        who, record = intake.admission, intake.record
        with self.store.write():
            where = {"platform": who.platform, "chat": who.chat}
            running = (
                None if intake.recheck else self.store.checks.in_flight(intake.digest, **where)
            )
            if running is not None:
                return record(repeat_of=running.id, repeat_kind="exact"), running
            self.parts.limits.refuse_if_full(who, self.pending(), intake.now)
            row = record(forced=intake.recheck, tokens=self.parts.limits.token_reserve)
            self._queue(row.id, None if intake.recheck else run_key(row))
            return row, row

    def _queue(self, check_id: str, text_key: str | None) -> None:
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

    def _run_of(self, check_id: str, created_at: dt.datetime) -> Run:
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
        found = await asyncio.to_thread(card_state, self.store, check_id)
        if found is None or run.done.done():
            return
        if isinstance(found.outcome, Failed):
            run.done.set_exception(CheckFailedError(found.outcome.reason))
        else:
            run.done.set_result(found.outcome)
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

    # -- serving -----------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def serving(
        self, platform: str, post_card: PostCard, send: SendCorrection | None
    ) -> AsyncIterator[Probes]:
        """Take ``platform``'s deliver jobs, and with ``send`` its correct jobs, for the
        block; the probes a health server asks: the database, and the jobs taken."""
        app = make_app(self.db.url, max_connections=DELIVERY_CONCURRENCY + 2)
        register_deliver_task(app, self.store, platform, post_card, self.settings)
        if send is not None:
            parts = self.parts

            async def corrections(check_id: str) -> bool:
                return await correct(
                    parts.store, parts.threads.run, parts.namer, check_id, (platform, send)
                )

            register_correct_tasks(app, self.store, platform, corrections, self.settings)
        name = f"{platform}-bot@{socket.gethostname()}:{os.getpid()}"
        async with app.open_async():
            queues = [deliver_queue(platform)]
            jobs = asyncio.create_task(
                run_jobs(app, queues, self.settings, concurrency=DELIVERY_CONCURRENCY, name=name)
            )

            async def database() -> bool:
                await asyncio.to_thread(self.store.ping)
                return True

            async def taking_deliveries() -> bool:
                return not jobs.done()

            metrics.DELIVERIES.labels(platform=platform)  # the series exists from the start
            try:
                yield {"database": database, "deliveries": taking_deliveries}
            finally:
                jobs.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await jobs
