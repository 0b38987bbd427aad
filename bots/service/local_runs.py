"""The engine runs of this process: one per text in flight, sharing the engine slots
chat by chat (:class:`~bots.service.fair_slots.FairSlots`).

A run sets its check ``running``, runs the engine, and stores the report with the
post's vector (or the reason it failed), each store write off the event loop; every
waiter on it is settled from its outcome. At shutdown a run goes back to ``queued``,
for the next start to resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from contextlib import AbstractAsyncContextManager

import numpy as np

from storage.rows import CheckStatus
from storage.store import CheckStore
from zofia_engine.errors import ZofiaError
from zofia_engine.ports import Checker
from zofia_engine.post import Post
from zofia_engine.text import clean_post

from .corrections import save_report
from .fair_slots import FairSlots
from .handles import CheckFailedError, CheckHandle, Outcome, Run, Waiters
from .repeats import NearRepeats
from .settings import ServiceSettings

__all__ = ["LocalRuns"]

log = logging.getLogger(__name__)


class LocalRuns:
    """The engine runs of :class:`~bots.service.checks.CheckService` in its own process.

    Args:
        checker: what checks a post.
        store: the open store.
        repeats: the near-repeat index, which takes each finished post's vector.
        waiters: the handles waiting on the runs.
        settings: the ``[service]`` section (how many runs at once).
    """

    def __init__(
        self,
        checker: Checker,
        store: CheckStore,
        repeats: NearRepeats,
        waiters: Waiters,
        settings: ServiceSettings,
    ) -> None:
        self.checker = checker
        self.store = store
        self.checks = store.checks
        self.repeats = repeats
        self.waiters = waiters
        self._slots = FairSlots(settings.max_concurrent_checks)
        self._by_text: dict[str, Run] = {}
        self._closing = False

    @property
    def count(self) -> int:
        """How many runs are in flight."""
        return len(self._by_text)

    def slot(self, chat: str) -> AbstractAsyncContextManager[None]:
        """One of the engine's slots, shared fairly by chat with the checks: model work
        other than a check (a follow-up question) runs under the same bound."""
        return self._slots.slot(chat)

    def running(self, digest: str) -> Run | None:
        """The run of the text keyed ``digest``, if one is in flight."""
        return self._by_text.get(digest)

    def launch(
        self,
        check_id: str,
        created_at: dt.datetime,
        post: Post,
        digest: str,
        vector: np.ndarray | None,
        chat: str,
    ) -> CheckHandle:
        """Start the engine on ``post`` for ``check_id``; its handle."""
        run = Run(check_id, created_at)
        self._by_text[digest] = run
        handle = self.waiters.wait_on(run, check_id, lambda result: result, own_row=True)
        run.task = asyncio.create_task(self._engine(run, post, digest, vector, chat))
        return handle

    async def _engine(
        self, run: Run, post: Post, digest: str, vector: np.ndarray | None, chat: str
    ) -> None:
        check_id = run.check_id
        try:
            async with self._slots.slot(chat):
                await asyncio.to_thread(self.checks.set_status, check_id, "running")
                if vector is None:
                    vector = await self.repeats.vector(clean_post(post.text)[0])
                report = await self.checker.check(post, on_progress=run.push)
            # A recheck that came to another verdict makes the older cards due with it.
            # An engine run in this process is the local mode's (queued, workers run them).
            await asyncio.to_thread(
                save_report, self.store, check_id, report, vector=vector, queued=False
            )
            self.repeats.add(check_id, vector)
            run.done.set_result(Outcome(check_id, report))
        except asyncio.CancelledError:
            # At shutdown the check goes back to the queue, for the next start to resume.
            # The write starts at once: a second cancel stops only the wait for it.
            status: CheckStatus = "queued" if self._closing else "cancelled"
            try:
                await asyncio.to_thread(self.checks.set_status, check_id, status)
            finally:
                run.done.cancel()
            raise
        except Exception as exc:
            reason = str(exc) if isinstance(exc, ZofiaError) else f"{type(exc).__name__}: {exc}"
            log.exception("check %s failed", check_id)
            try:
                await asyncio.to_thread(self.checks.set_status, check_id, "failed", error=reason)
            finally:
                run.done.set_exception(CheckFailedError(f"The check failed: {reason}"))
        finally:
            if self._by_text.get(digest) is run:
                del self._by_text[digest]
            self.waiters.forget(check_id)
            run.changed.set()

    def resume_unfinished(self) -> list[str]:
        """Take up the checks a crash left queued or running, oldest first: a repeat of a
        check since done is done too; one whose text is gone is failed with that reason;
        the others run again (the text only: the images' bytes were never kept).

        Returns:
            The ids of the checks resumed.
        """
        resumed: list[str] = []
        for row in self.checks.unfinished():
            if row.repeat_of is not None:
                original = self.checks.get(row.repeat_of)
                if original is not None and original.status == "done":
                    self.checks.set_status(row.id, "done")
                    continue
            post = row.post  # its text only: the images' bytes were never kept
            if post is None or not post.text:
                self.checks.set_status(
                    row.id, "failed", error="interrupted by a restart, and its text is gone"
                )
                continue
            self.launch(row.id, row.created_at, post, row.text_hash, None, row.chat)
            resumed.append(row.id)
        return resumed

    async def aclose(self) -> None:
        """Stop the runs still going; they are stored as queued and resume on the next start."""
        self._closing = True
        tasks = [run.task for run in self._by_text.values() if run.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
