"""The jobs: a check run by a worker, a card delivered by a bot, stalled jobs put back.

A check job runs the engine on the stored post and saves the report; the save is
idempotent per check id, so a job run twice (its worker was thought dead, or was)
leaves exactly one report. Ending a check is one transaction
(:func:`~bots.service.queue.ending.end_check`): the checks that joined it end with it, a
``deliver`` job is queued for every card still to post, and the ``done`` event is
published, all on commit. A job that gives up ends its check as failed; if even that
fails, the failure is logged, the job fails, and the periodic sweep ends the check.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import datetime as dt
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
from procrastinate import App, JobContext, RetryStrategy
from procrastinate.exceptions import ConnectorException

from storage.errors import StorageError
from storage.postgres import PostgresDatabase
from storage.store import CheckStore
from zofia_engine.errors import ZofiaError
from zofia_engine.ports import Checker, TextEncoder
from zofia_engine.post import ProgressEvent
from zofia_engine.report import Report

from ..delivery import PostCard
from ..finished import save_report
from ..posts import read_stored
from ..records import CardState, Failed
from ..repeats import post_vector
from ..settings import QueueSettings
from ..shown import card_state
from . import ending, metrics
from .corrections import queue_corrections
from .ending import end_check, sweep_unfinished
from .events import publish
from .jobs import (
    CHECK_TASK,
    CHECKS_QUEUE,
    DELIVER_TASK,
    MAINTENANCE_QUEUE,
    RETRY_STALLED_TASK,
    cron_every,
    deliver_queue,
)

__all__ = [
    "CHECK_ID",
    "CheckRunner",
    "DeliveryBusyError",
    "EndFailedError",
    "register_check_tasks",
    "register_deliver_task",
    "run_jobs",
]

log = logging.getLogger(__name__)

#: the check whose job is running in this context ("" outside one), for the logs
CHECK_ID: contextvars.ContextVar[str] = contextvars.ContextVar("zofia_check_id", default="")

#: the longest a deliver job waits for its ``not_before`` (a skewed clock cannot stall it)
MAX_DELIVER_WAIT_S = 10.0
#: fresh transactions a giving-up check job tries to end its check in
GIVE_UP_TRIES = 2


class DeliveryBusyError(Exception):
    """Another replica holds this delivery's lease; the job tries again later."""


class EndFailedError(Exception):
    """A check's run reached its end, and ending it failed (its cause is chained).

    Args:
        check_id: the check.
        error: what it was to end with: why it failed, or ``None`` (it is done).
    """

    def __init__(self, check_id: str, error: str | None) -> None:
        super().__init__(f"ending check {check_id} failed")
        self.error = error


class CheckRunner:
    """Runs check jobs in a worker process, with the engine loaded once.

    Args:
        checker: the engine.
        store: the store, on PostgreSQL.
        encoder: the engine's sentence encoder (the post vector for near repeats).
        deliver_delay: how long after a check ends its cards are posted.

    Raises:
        StorageError: the store is on SQLite.
    """

    def __init__(
        self,
        checker: Checker,
        store: CheckStore,
        encoder: TextEncoder,
        *,
        deliver_delay: dt.timedelta = dt.timedelta(seconds=1),
    ) -> None:
        self.checker = checker
        self.store = store
        self.db = store.postgres()
        self.encoder = encoder
        self.deliver_delay = deliver_delay
        # Progress events go out in order, off the event loop.
        self._publisher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zofia-events")
        self.runs = 0  # engine runs started in this process (the tests count them)

    async def run(self, check_id: str) -> None:
        """Check ``check_id`` unless it has ended; end it (and its joiners) either way."""
        CHECK_ID.set(check_id)
        row = await asyncio.to_thread(self.store.checks.get, check_id)
        if row is None or row.status == "cancelled":
            return
        if row.status == "failed":
            await self._end(check_id, row.error)
            return
        if row.status != "done":
            error = await self._check(check_id, row.post)
            if error is not None:
                await self._end(check_id, error)
                return
        await self._end(check_id, None)

    async def _end(self, check_id: str, error: str | None) -> None:
        try:
            await asyncio.to_thread(self.end, check_id, error)
        except Exception as exc:
            raise EndFailedError(check_id, error) from exc

    async def _check(self, check_id: str, post: Any) -> str | None:
        """Run the engine and save its report; the reason it failed, or ``None``."""
        if post is None or not post.text:
            return "its text is gone (purged before a worker took it up)"
        await asyncio.to_thread(self.store.checks.set_status, check_id, "running")
        self.runs += 1
        started = time.monotonic()
        loop = asyncio.get_running_loop()

        def progress(event: ProgressEvent) -> None:
            # A notification holds 8000 bytes: an early report goes to the store, for
            # the API's poll, before its event is announced (on the same thread).
            early = event.report
            said = event.model_dump(exclude={"report"})
            loop.run_in_executor(self._publisher, self._announce, check_id, said, early)

        try:
            reading = await asyncio.to_thread(self.store.media_readings.get, check_id)
            read = await read_stored(self.checker, post, reading)
            report = await self.checker.check(read, on_progress=progress)
            # The same vector an in-process run stores (bots.service.local).
            vector = await asyncio.to_thread(post_vector, self.encoder, read.text)
        except ZofiaError as exc:
            log.warning("check %s failed: %s", check_id, exc)
            metrics.CHECKS.labels(outcome="failed").inc()
            return str(exc)
        except Exception as exc:  # a bug is a failed check, not a job to retry forever
            log.exception("check %s failed", check_id)
            metrics.CHECKS.labels(outcome="failed").inc()
            return f"{type(exc).__name__}: {exc}"
        try:
            # A recheck that came to another verdict queues the older cards' corrections.
            await asyncio.to_thread(
                save_report, self.store, check_id, report, vector, self._queue_due
            )
        except StorageError:  # another run of this job saved first: one report, theirs
            log.info("check %s already had its report", check_id)
        except (ValueError, TypeError, psycopg.IntegrityError) as exc:  # never saveable
            log.exception("check %s: its report cannot be stored", check_id)
            metrics.CHECKS.labels(outcome="failed").inc()
            return f"its report could not be stored ({type(exc).__name__})"
        metrics.CHECKS.labels(outcome=report.verdict).inc()
        metrics.CHECK_SECONDS.observe(time.monotonic() - started)
        metrics.LLM_TOKENS.labels(kind="prompt").inc(report.usage.prompt_tokens)
        metrics.LLM_TOKENS.labels(kind="completion").inc(report.usage.completion_tokens)
        return None

    def _announce(self, check_id: str, event: dict[str, Any], early: Report | None) -> None:
        """Publish a progress ``event`` of ``check_id``, after keeping its early report."""
        if early is not None:
            try:
                self.store.reports.save_early(check_id, early)
            except Exception:  # the poll shows "running" until the report: nothing lost
                log.exception("check %s: its early report could not be kept", check_id)
        publish(self.db, check_id, "progress", event)

    def _queue_due(self, due: dict[str, list[str]]) -> None:
        """The ``correct`` jobs of the cards a recheck made due."""
        for original_id, platforms in due.items():
            queue_corrections(self.db, original_id, platforms)

    def end(self, check_id: str, error: str | None) -> None:
        """End the check (see :func:`~bots.service.queue.ending.end_check`), after the
        progress events still on their way, so that none follows the outcome.

        The deliveries wait :attr:`deliver_delay` so that a progress edit already on its
        way to the chat lands before the card, not over it. The wait is the job's own
        (``not_before``): a job scheduled for later would wake no bot by NOTIFY and wait
        for the next poll."""
        self._publisher.submit(lambda: None).result()
        at = self.store.clock() + self.deliver_delay
        end_check(self.store, self.db, check_id, error, deliver_at=at)

    def close(self) -> None:
        self._publisher.shutdown(wait=True)


def _retry_stalled(
    app: App, settings: QueueSettings, store: CheckStore, db: PostgresDatabase
) -> None:
    """Register the periodic job that puts back jobs whose worker went silent, and ends
    the checks no job will end any more (once)."""
    if RETRY_STALLED_TASK in app.tasks:
        return

    @app.periodic(cron=cron_every(settings.heartbeat_s))
    @app.task(name=RETRY_STALLED_TASK, queue=MAINTENANCE_QUEUE, queueing_lock="retry-stalled")
    async def retry_stalled(timestamp: int) -> None:
        manager = app.job_manager
        for job in await manager.get_stalled_jobs(seconds_since_heartbeat=settings.stalled_after_s):
            try:
                await manager.retry_job(job)
                log.warning("job %s (%s) was stalled: queued again", job.id, job.task_name)
            except ConnectorException:  # moved on meanwhile, or its twin already waits
                log.info("stalled job %s not retried", job.id, exc_info=True)
        await asyncio.to_thread(sweep_unfinished, store, db, older_than=ending.UNFINISHED_AFTER)


def register_check_tasks(app: App, runner: CheckRunner, settings: QueueSettings) -> None:
    """The jobs a worker process takes: checks, and the stalled-job sweep."""

    # Procrastinate reads ``max_attempts=0`` as "no bound": one attempt in all is no retry.
    retries = settings.max_attempts - 1

    @app.task(
        name=CHECK_TASK,
        queue=CHECKS_QUEUE,
        pass_context=True,
        retry=RetryStrategy(max_attempts=retries, wait=1) if retries else False,
    )
    async def check(context: JobContext, check_id: str) -> None:
        # Attempts count every run, those the stalled-job sweep started included: a post
        # whose run kills its worker is given up, not retried forever.
        attempts = context.job.attempts if context.job is not None else 0
        if attempts >= settings.max_attempts:
            await _give_up(runner, check_id, f"it was tried {attempts} times and never finished")
            return
        try:
            await runner.run(check_id)
        except Exception as exc:
            if attempts + 1 < settings.max_attempts:
                raise  # Procrastinate runs it again
            log.exception("check %s: giving up after %d attempts", check_id, attempts + 1)
            reason = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, EndFailedError):  # the run's own outcome, not the end's error
                reason = exc.error or f"{type(exc.__cause__).__name__}: {exc.__cause__}"
            await _give_up(runner, check_id, reason)
            raise

    _retry_stalled(app, settings, runner.store, runner.db)


async def _give_up(runner: CheckRunner, check_id: str, reason: str) -> None:
    """End the check as failed for ``reason`` (done if its report is stored), each try
    in a fresh transaction. When every try fails the error is logged and raised: the
    job fails where ``zofia queue`` shows it, and the sweep of unfinished checks
    (:func:`~bots.service.queue.ending.sweep_unfinished`) ends the check later."""
    for attempt in range(GIVE_UP_TRIES):
        try:
            await asyncio.to_thread(runner.end, check_id, reason)
            return
        except Exception:
            if attempt + 1 == GIVE_UP_TRIES:
                log.exception(
                    "check %s could not be ended; left for the sweep of unfinished checks",
                    check_id,
                )
                raise
            log.warning("check %s: ending it failed; trying again", check_id, exc_info=True)
            await asyncio.sleep(1.0)


def register_deliver_task(
    app: App, store: CheckStore, platform: str, post_card: PostCard, settings: QueueSettings
) -> None:
    """The jobs a bot process takes: its platform's deliveries, and the stalled-job sweep.

    Raises:
        StorageError: the store is on SQLite.
    """
    db = store.postgres()
    deliveries = store.deliveries

    @app.task(
        name=DELIVER_TASK,
        queue=deliver_queue(platform),
        pass_context=True,
        retry=RetryStrategy(max_attempts=8, wait=1, exponential_wait=2),
    )
    async def deliver(context: JobContext, check_id: str, not_before: str = "") -> None:
        CHECK_ID.set(check_id)
        if not_before:
            wait = dt.datetime.fromisoformat(not_before) - store.clock()
            await asyncio.sleep(min(max(wait.total_seconds(), 0.0), MAX_DELIVER_WAIT_S))
        claim = await asyncio.to_thread(deliveries.claim, check_id)
        if claim is None:
            if await asyncio.to_thread(deliveries.is_claimed, check_id):
                raise DeliveryBusyError(f"delivery of {check_id} is held by another replica")
            return  # delivered already, or nobody waits for it
        try:
            found = await asyncio.to_thread(card_state, store, check_id)
            if found is None:
                found = CardState(Failed(check_id, "The check ended without an answer to show."))
            await post_card(claim, found)
        except BaseException:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(deliveries.release, claim)
            raise
        if not await asyncio.to_thread(deliveries.delivered, claim):
            log.warning("delivery of %s was taken over by another replica", check_id)
        metrics.DELIVERIES.labels(platform=platform).inc()

    _retry_stalled(app, settings, store, db)


async def run_jobs(
    app: App, queues: list[str], settings: QueueSettings, *, concurrency: int, name: str
) -> None:
    """Take jobs from ``queues`` until cancelled. Procrastinate's worker returns when its
    listener loses the database (a restart), or raises while the database is still
    away; either way it is started again, after a pause that grows while it fails.

    A cancellation ends the loop whatever the worker does with it: Procrastinate's
    shutdown may raise instead (``AppNotOpen`` when the app closed under the worker) or
    return, and the task is still cancelled then, never restarted."""
    pause = 1.0
    while True:
        started = dt.datetime.now(dt.UTC)
        try:
            await app.run_worker_async(
                queues=[*queues, MAINTENANCE_QUEUE],
                name=name,
                concurrency=concurrency,
                install_signal_handlers=False,
                delete_jobs="successful",
                fetch_job_polling_interval=settings.poll_s,
                update_heartbeat_interval=settings.heartbeat_s,
                stalled_worker_timeout=settings.stalled_after_s,
            )
        except Exception as exc:
            if _cancelling():
                log.info("the job worker raised %s on its way out", type(exc).__name__)
                raise asyncio.CancelledError from exc
            log.exception("the job worker failed; restarting in %.0f s", pause)
            pause = min(pause * 2, 30.0)
        else:
            if _cancelling():
                raise asyncio.CancelledError
            pause = 1.0
            log.warning(
                "the job worker stopped (lost the database?) after %s; restarting",
                dt.datetime.now(dt.UTC) - started,
            )
        await asyncio.sleep(pause)


def _cancelling() -> bool:
    """Whether this task was asked to stop, even when the worker swallowed the request."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
