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
import logging
from contextlib import AbstractAsyncContextManager

import numpy as np

from storage.other_chats import may_answer
from storage.rows import CheckRow, CheckStatus
from storage.store import CheckStore
from zofia_engine.errors import ZofiaError
from zofia_engine.ports import Checker
from zofia_engine.post import Post, ReadPost

from .corrections import save_report
from .fair_slots import FairSlots
from .handles import CheckHandle, Run, Waiters
from .records import CheckFailedError, Outcome
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
        # The runs in flight by text key, each with its check; one text has several only
        # when a check that answers its own chat only holds one (storage.other_chats).
        self._by_text: dict[str, list[tuple[CheckRow, Run]]] = {}
        self._closing = False

    @property
    def count(self) -> int:
        """How many runs are in flight."""
        return sum(len(runs) for runs in self._by_text.values())

    def slot(self, chat: str) -> AbstractAsyncContextManager[None]:
        """One of the engine's slots, shared fairly by chat with the checks: model work
        other than a check (a follow-up question) runs under the same bound."""
        return self._slots.slot(chat)

    def running(self, digest: str, platform: str, chat: str) -> tuple[CheckRow, Run] | None:
        """The newest run of the text keyed ``digest`` in flight that may answer ``chat``
        (keyed) on ``platform`` (:func:`~storage.other_chats.may_answer`), with its check."""
        for row, run in reversed(self._by_text.get(digest, [])):
            if may_answer(row, platform, chat):
                return row, run
        return None

    def launch(
        self, row: CheckRow, post: ReadPost | Post, digest: str, vector: np.ndarray | None
    ) -> CheckHandle:
        """Start the engine on ``post`` for check ``row`` (read, or stored: read first);
        its handle."""
        run = Run(row.id, row.created_at)
        self._by_text.setdefault(digest, []).append((row, run))
        handle = self.waiters.wait_on(run, row.id, lambda result: result, own_row=True)
        run.task = asyncio.create_task(self._engine(row, run, post, digest, vector))
        return handle

    async def _engine(
        self, row: CheckRow, run: Run, post: ReadPost | Post, digest: str, vector: np.ndarray | None
    ) -> None:
        check_id = run.check_id
        try:
            async with self._slots.slot(row.chat):
                await asyncio.to_thread(self.checks.set_status, check_id, "running")
                read = post if isinstance(post, ReadPost) else await self.checker.read(post)
                if vector is None:
                    vector = await self.repeats.vector(read.text)
                report = await self.checker.check(read, on_progress=run.push)
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
            runs = self._by_text.get(digest, [])
            if (row, run) in runs:
                runs.remove((row, run))
            if not runs:
                self._by_text.pop(digest, None)
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
            self.launch(row, post, row.text_hash, None)
            resumed.append(row.id)
        return resumed

    async def aclose(self) -> None:
        """Stop the runs still going; they are stored as queued and resume on the next start."""
        self._closing = True
        runs = [run for held in self._by_text.values() for _, run in held]
        tasks = [run.task for run in runs if run.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
