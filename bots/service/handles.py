"""What a submitted check is to its requesters: the handle they wait on for their
outcome (:mod:`.records`); the one engine run that every waiter shares; and the
waiters of this process (:class:`Waiters`), whose store writes run off the event loop."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from storage.checks import Checks
from storage.other_chats import shown_to
from storage.rows import CheckRow, CheckStatus
from zofia_engine.post import ProgressEvent

from .records import Outcome

__all__ = [
    "CheckHandle",
    "Run",
    "Turnstile",
    "Waiters",
    "joined",
]

log = logging.getLogger(__name__)


class Run:
    """One engine run: its events so far and its outcome, shared by every waiter."""

    def __init__(self, check_id: str, created_at: dt.datetime) -> None:
        self.check_id = check_id
        self.created_at = created_at
        self.events: list[ProgressEvent] = []
        self.changed = asyncio.Event()
        self.done: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        # Waiters read the outcome; this keeps an unread failure from being logged as lost.
        self.done.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.task: asyncio.Task[None] | None = None
        self.waiting = 0  # handles still waiting for the outcome

    def leave(self) -> None:
        """A waiter stopped waiting; the run is cancelled when nobody waits any more."""
        self.waiting -= 1
        if self.waiting <= 0 and not self.done.done() and self.task is not None:
            self.task.cancel()

    def push(self, event: ProgressEvent) -> None:
        self.events.append(event)
        self.changed.set()


class Turnstile:
    """A lock per post text, dropped when its last user leaves."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class CheckHandle:
    """A submitted check. ``repeat_kind`` is known at once for answers from the store.

    Every handle waiting on a run has its own outcome: cancelling one stops that
    requester's wait, and the run itself stops when nobody waits for it any more.
    ``delivered_elsewhere``: the check's card is posted by a ``deliver`` job, on
    whichever bot replica runs it, not by whoever holds this handle (the queued mode).
    """

    def __init__(
        self,
        check_id: str,
        outcome: asyncio.Future[Outcome],
        run: Run | None = None,
        on_cancel: Callable[[], None] | None = None,
        *,
        delivered_elsewhere: bool = False,
    ) -> None:
        self.check_id = check_id
        self.delivered_elsewhere = delivered_elsewhere
        #: how many checks its requester may still ask today (set by the service)
        self.checks_left: int | None = None
        self._outcome = outcome
        self._run = run
        self._on_cancel = on_cancel

    @property
    def done(self) -> bool:
        return self._outcome.done()

    @property
    def cancelled(self) -> bool:
        """Whether this requester stopped waiting (the Cancel button)."""
        return self._outcome.cancelled()

    async def result(self) -> Outcome:
        """The outcome. Raises :class:`CheckFailedError`, or ``CancelledError`` if cancelled."""
        try:
            return await asyncio.shield(self._outcome)
        except asyncio.CancelledError:
            run = self._run
            if (
                self._outcome.cancelled()
                and run is not None
                and run.task is not None
                and run.waiting <= 0
            ):
                await asyncio.wait([run.task])  # this cancel stopped the run: let it record that
            raise

    async def events(self) -> AsyncIterator[ProgressEvent]:
        """Progress events from the start of the run, then live ones until it ends
        (or until this handle stops waiting)."""
        run = self._run
        if run is None:
            return
        seen = 0
        while True:
            while seen < len(run.events):
                seen += 1
                yield run.events[seen - 1]
            if run.done.done() or self._outcome.done():
                return
            run.changed.clear()
            waiter: asyncio.Future[Any] = asyncio.ensure_future(run.changed.wait())
            pending: list[asyncio.Future[Any]] = [waiter, run.done, self._outcome]
            await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()

    def cancel(self) -> bool:
        """Stop waiting for this check; its run stops too when nobody else waits for it.

        Returns:
            ``False`` when the check had already finished.
        """
        if not self._outcome.cancel():
            return False
        if self._on_cancel is not None:
            self._on_cancel()
        return True


class Waiters:
    """The handles of the checks submitted or resumed in this process and still waiting.

    A joined check's status follows the run it waits on; it is written off the event
    loop (a write held elsewhere keeps no bot waiting), one write of a check after
    another, and its waiter is settled once the write is through.

    Args:
        checks: the store's checks, whose statuses follow the runs waited on.
    """

    def __init__(self, checks: Checks) -> None:
        self.checks = checks
        self._by_id: dict[str, CheckHandle] = {}
        self._writing: dict[str, asyncio.Task[None]] = {}  # each check's latest write

    def get(self, check_id: str) -> CheckHandle | None:
        """The handle of ``check_id``, while it waits."""
        return self._by_id.get(check_id)

    def forget(self, check_id: str) -> None:
        self._by_id.pop(check_id, None)

    def wait_on(
        self,
        run: Run,
        check_id: str,
        outcome: Callable[[Outcome], Outcome],
        *,
        own_row: bool,
        on_leave: Callable[[], None] | None = None,
        delivered_elsewhere: bool = False,
    ) -> CheckHandle:
        """A handle with its own outcome, settled from ``run``'s.

        ``own_row``: ``check_id``'s status is kept by the run (its own check, or any
        check when a worker runs it); otherwise a joined check's row follows the run,
        or is cancelled when its waiter leaves. ``on_leave``: also called then.
        """
        waiter: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        run.waiting += 1

        def settle(done: asyncio.Future[Outcome]) -> None:
            self._by_id.pop(check_id, None)
            if waiter.done():
                return
            if own_row:
                _pass_on(done, waiter, outcome)
                return
            if done.cancelled():
                written = self._write(check_id, "cancelled")
            elif (error := done.exception()) is not None:
                written = self._write(check_id, "failed", str(error))
            else:
                written = self._write(check_id, "done")
            written.add_done_callback(lambda _: _pass_on(done, waiter, outcome))

        def leave() -> None:
            self._by_id.pop(check_id, None)
            if not own_row:
                self._write(check_id, "cancelled")
            if on_leave is not None:
                on_leave()
            run.leave()

        run.done.add_done_callback(settle)
        handle = CheckHandle(
            check_id, waiter, run, on_cancel=leave, delivered_elsewhere=delivered_elsewhere
        )
        self._by_id[check_id] = handle
        return handle

    async def flush(self) -> None:
        """Wait until the status writes under way are through (at shutdown, before the
        store closes)."""
        while self._writing:
            await asyncio.wait(list(self._writing.values()))

    def _write(self, check_id: str, status: CheckStatus, error: str = "") -> asyncio.Task[None]:
        """Set a joined check's status off the event loop, after its earlier writes."""
        previous = self._writing.get(check_id)
        task = asyncio.get_running_loop().create_task(
            self._set_status(previous, check_id, status, error)
        )
        self._writing[check_id] = task

        def done(_: asyncio.Task[None]) -> None:
            if self._writing.get(check_id) is task:
                del self._writing[check_id]

        task.add_done_callback(done)
        return task

    async def _set_status(
        self,
        previous: asyncio.Task[None] | None,
        check_id: str,
        status: CheckStatus,
        error: str,
    ) -> None:
        if previous is not None:
            await asyncio.wait([previous])
        try:
            await asyncio.to_thread(self.checks.set_status, check_id, status, error=error)
        except Exception:  # the waiter is answered all the same
            log.warning("could not set check %s %s", check_id, status, exc_info=True)


def _pass_on(
    done: asyncio.Future[Outcome],
    waiter: asyncio.Future[Outcome],
    outcome: Callable[[Outcome], Outcome],
) -> None:
    """Settle ``waiter`` as the run's ``done`` ended, unless it stopped waiting already."""
    if waiter.done():
        return
    if done.cancelled():
        waiter.cancel()
    elif (error := done.exception()) is not None:
        waiter.set_exception(error)
    else:
        waiter.set_result(outcome(done.result()))


def joined(row: CheckRow, original: CheckRow) -> Callable[[Outcome], Outcome]:
    """What ``row`` is answered from the outcome of ``original``'s run: the outcome itself
    when it is the original, else an exact repeat, the report as ``row``'s chat is shown
    it (:mod:`storage.other_chats`)."""

    def outcome(result: Outcome) -> Outcome:
        if row.id == original.id:
            return result
        report = shown_to(row, original, result.report)
        return Outcome(row.id, report, "exact", original.id, original.created_at, 1.0)

    return outcome
