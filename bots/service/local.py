"""The local mode: the engine runs in this process, and the bot that asked posts the
card.

A new check joins the run of its text in flight here (one per text, unless a check that
answers its own chat only holds it: :mod:`storage.other_chats`), or is answered from the
store, or starts a run on the engine slots, shared chat by chat
(:class:`~bots.service.fair_slots.FairSlots`). A run sets its check ``running``, runs the
engine, and stores the report with the post's vector (or the reason it failed), each
store write off the event loop; every waiter on it is settled from its outcome. At
shutdown a run goes back to ``queued``, for the next start to resume. Corrections due
are found by polling the store (:func:`~bots.service.corrections.correcting`): a review
may come from ``zofia review`` in another process.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import numpy as np

from storage.other_chats import may_answer
from storage.rows import CheckRow, CheckStatus
from zofia_engine.errors import ZofiaError
from zofia_engine.post import Post, ProgressEvent, ReadPost

from .corrections import correcting
from .delivery import Intake, Parts, PostCard, Probes
from .finished import save_report
from .handles import CheckHandle, Run, joined
from .posts import read_stored
from .records import CheckFailedError, Outcome, SendCorrection
from .stored_answers import answer_from_store

__all__ = ["LocalDelivery"]

log = logging.getLogger(__name__)


def _nothing_queued(due: dict[str, list[str]]) -> None:
    """The local mode queues no correction: the bot's poll of the store finds them."""


class LocalDelivery:
    """The engine runs of the service in its own process.

    Args:
        parts: the service's parts.
    """

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self.store = parts.store
        # The runs in flight by text key, each with its check; one text has several only
        # when a check that answers its own chat only holds one (storage.other_chats).
        self._by_text: dict[str, list[tuple[CheckRow, Run]]] = {}
        self._closing = False

    def pending(self) -> int:
        """How many runs are in flight."""
        return sum(len(runs) for runs in self._by_text.values())

    def queue_due(self, due: dict[str, list[str]]) -> None:
        _nothing_queued(due)

    def forget_stale(self, now: dt.datetime) -> None:
        """Nothing is kept of deliveries here."""

    async def expect(self, check_id: str, platform: str, target: dict[str, Any]) -> None:
        """The bot that asked posts the card (no handle here is delivered elsewhere)."""

    async def start(self, *, resume: bool) -> list[str]:
        if not resume:  # a one-shot run beside a bot leaves the bot's requests alone
            return []
        # Taking up the store's unfinished work: nobody waits on an attempt begun before.
        await self.parts.threads.run(self.store.attempts.end_open)
        unfinished = await self.parts.threads.run(self._unfinished)
        return [self._launch(row, post, row.text_hash, None).check_id for row, post in unfinished]

    def _unfinished(self) -> list[tuple[CheckRow, Post]]:
        """The checks a crash left queued or running, oldest first, to run again (the text
        only: the images' bytes were never kept); a repeat of a check since done is done
        too, and one whose text is gone is failed with that reason (blocking)."""
        checks, again = self.store.checks, []
        for row in checks.unfinished():
            if row.repeat_of is not None:
                original = checks.get(row.repeat_of)
                if original is not None and original.status == "done":
                    checks.set_status(row.id, "done")
                    continue
            post = row.post
            if post is None or not post.text:
                checks.set_status(
                    row.id, "failed", error="interrupted by a restart, and its text is gone"
                )
                continue
            again.append((row, post))
        return again

    async def submit(self, intake: Intake) -> CheckHandle:
        who = intake.admission
        running = self._running(intake.digest, who.platform, who.chat)
        if running is not None:  # the same text is being checked: wait on that run
            original, run = running
            row = await self.parts.threads.run(
                intake.record, repeat_of=original.id, repeat_kind="exact"
            )
            return self.parts.waiters.wait_on(run, row.id, joined(row, original), own_row=False)
        vector = None
        if not intake.recheck:
            answered, vector = await answer_from_store(self.parts, intake)
            if answered is not None:
                return answered
        if vector is None:
            vector = await self.parts.repeats.vector(intake.read.text)
        row = await self.parts.threads.run(self._bounded_row, intake)
        return self._launch(row, intake.read, intake.digest, vector)

    def _bounded_row(self, intake: Intake) -> CheckRow:
        """A new check's row, with its reserve of the day's tokens, written only if the
        bounds and shares allow it, in one write transaction (blocking)."""
        limits = self.parts.limits
        with self.store.write():
            limits.refuse_if_full(intake.admission, self.pending(), intake.now)
            return intake.record(forced=intake.recheck, tokens=limits.token_reserve)

    def _running(self, digest: str, platform: str, chat: str) -> tuple[CheckRow, Run] | None:
        """The newest run of the text keyed ``digest`` in flight that may answer ``chat``
        (keyed) on ``platform`` (:func:`~storage.other_chats.may_answer`), with its check."""
        for row, run in reversed(self._by_text.get(digest, [])):
            if may_answer(row, platform, chat):
                return row, run
        return None

    def _launch(
        self, row: CheckRow, post: ReadPost | Post, digest: str, vector: np.ndarray | None
    ) -> CheckHandle:
        """Start the engine on ``post`` for check ``row`` (read, or stored: read first);
        its handle."""
        run = Run(row.id, row.created_at)
        self._by_text.setdefault(digest, []).append((row, run))
        handle = self.parts.waiters.wait_on(run, row.id, lambda result: result, own_row=True)
        run.task = asyncio.create_task(self._engine(row, run, post, vector))
        return handle

    async def _read_stored(self, check_id: str, post: Post) -> ReadPost:
        """A resumed check's stored post, read again with what was read from its images
        and heard in its voice note."""
        reading = await self.parts.threads.run(self.store.media_readings.get, check_id)
        return await read_stored(self.parts.checker, post, reading)

    async def _engine(
        self, row: CheckRow, run: Run, post: ReadPost | Post, vector: np.ndarray | None
    ) -> None:
        parts, check_id = self.parts, run.check_id

        def set_status(status: CheckStatus, error: str = "") -> Awaitable[None]:
            return parts.threads.run(parts.store.checks.set_status, check_id, status, error=error)

        try:
            async with parts.slots.slot(row.chat):
                await set_status("running")
                read = (
                    post if isinstance(post, ReadPost) else await self._read_stored(check_id, post)
                )
                if vector is None:
                    vector = await parts.repeats.vector(read.text)
                report = await parts.checker.check(read, on_progress=self._progress(run))
            # A recheck that came to another verdict makes the older cards due with it.
            await parts.threads.run(
                save_report, self.store, check_id, report, vector, _nothing_queued
            )
            parts.repeats.add(check_id, vector)
            run.done.set_result(Outcome(check_id, report))
        except asyncio.CancelledError:
            # At shutdown the check goes back to the queue, for the next start to resume.
            # The write starts at once: a second cancel stops only the wait for it.
            status: CheckStatus = "queued" if self._closing else "cancelled"
            try:
                await set_status(status)
            finally:
                run.done.cancel()
            raise
        except Exception as exc:
            reason = str(exc) if isinstance(exc, ZofiaError) else f"{type(exc).__name__}: {exc}"
            log.exception("check %s failed", check_id)
            try:
                await set_status("failed", error=reason)
            finally:
                run.done.set_exception(CheckFailedError(f"The check failed: {reason}"))
        finally:
            self._forget(row, run)

    def _progress(self, run: Run) -> Callable[[ProgressEvent], Awaitable[None]]:
        """``run``'s progress hook: each event to its waiters, and an early report (the
        verdict fixed before the debate) kept in the store, for the API's poll (a
        failure to keep it is logged by the engine, and loses nothing else)."""

        async def progress(event: ProgressEvent) -> None:
            run.push(event)
            if event.report is not None:
                save = self.store.reports.save_early
                await self.parts.threads.run(save, run.check_id, event.report)

        return progress

    def _forget(self, row: CheckRow, run: Run) -> None:
        runs = self._by_text.get(row.text_hash, [])
        if (row, run) in runs:
            runs.remove((row, run))
        for digest in [d for d, held in self._by_text.items() if not held]:
            del self._by_text[digest]
        self.parts.waiters.forget(run.check_id)
        run.changed.set()

    @contextlib.asynccontextmanager
    async def serving(
        self, platform: str, post_card: PostCard, send: SendCorrection | None
    ) -> AsyncIterator[Probes]:
        """Send ``platform``'s corrections due, found by a poll of the store (the bot
        posts its own cards: ``post_card`` has nothing to do here)."""
        if send is None:
            yield {}
            return
        parts = self.parts
        async with correcting(parts.store, parts.threads.run, parts.namer, (platform, send)):
            yield {}

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
