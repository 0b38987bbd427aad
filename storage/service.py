"""The check service: one platform-neutral front door for the CLI and the bots.

``submit(post, requester)`` answers at once from the store when the same post
(or a near copy, by SBERT cosine) was checked within the freshness window,
joins a run already under way for the same text, and otherwise queues a new
run of the engine. Every check is a row in SQLite from the moment it is
submitted, so a crash loses nothing: :meth:`CheckService.start` resumes the
checks left queued or running, or fails them with a stored reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from zofia_engine.errors import ZofiaError
from zofia_engine.ports import Checker, TextEncoder
from zofia_engine.post import Post
from zofia_engine.text import checkable_text, clean_post

from .chat_operations import ChatOperations
from .fair_slots import FairSlots
from .handles import CheckFailedError, CheckHandle, Outcome, Requester, Run, Turnstile
from .keys import keyed_text_hash
from .limits import RequestLimits, refuse_if_full
from .repeats import NearRepeats
from .rows import RepeatKind
from .settings import ServiceSettings
from .store import CheckRow, CheckStore

__all__ = ["CheckFailedError", "CheckHandle", "CheckService", "Outcome", "Requester"]

log = logging.getLogger(__name__)


class CheckService(ChatOperations):
    """Submits posts to the engine through the store.

    Args:
        checker: what checks a post (the engine, or a stand-in in tests).
        store: the open store.
        settings: the ``[service]`` section.
        secret: the HMAC key for user ids, chat ids and text keys.
        encoder: the sentence encoder that finds near repeats (the engine's, so that
            the model is loaded once); its dimension sizes the index.
        clock: the time source; the store's by default, so both agree.
        retention: how long post text and evidence are kept (``None``: forever);
            :meth:`start` and :meth:`purge_expired` delete what is older.
    """

    #: whether deliver jobs post the cards (the bots then only show progress)
    delivers_cards = False

    def __init__(
        self,
        checker: Checker,
        store: CheckStore,
        settings: ServiceSettings,
        *,
        secret: bytes,
        encoder: TextEncoder,
        clock: Callable[[], dt.datetime] | None = None,
        retention: dt.timedelta | None = None,
    ) -> None:
        self.checker = checker
        self.retention = retention
        self.store = store
        self.settings = settings
        self.secret = secret
        self.encoder = encoder
        self.clock = clock or store.clock
        self.limits = RequestLimits(store, settings)
        self.repeats = NearRepeats(store, encoder, settings)
        self._slots = FairSlots(settings.max_concurrent_checks)
        self._by_text: dict[str, Run] = {}
        self._by_id: dict[str, CheckHandle] = {}
        self._deciding: dict[str, Turnstile] = {}
        self._closing = False

    @property
    def window(self) -> dt.timedelta:
        return dt.timedelta(hours=self.settings.repeat_window_hours)

    async def start(self, *, resume: bool = True) -> list[str]:
        """Load the near-repeat index and take up checks a crash left unfinished.

        Args:
            resume: take up unfinished checks (a one-shot CLI run leaves them to the bot).

        Returns:
            The ids of the checks resumed (the others were failed with a reason).
        """
        await self.repeats.load(since=self.clock() - self.window)
        self.purge_expired()
        resumed: list[str] = []
        if not resume:
            return resumed
        for row in self.store.unfinished():
            if row.repeat_of is not None:
                original = self.store.get_check(row.repeat_of)
                if original is not None and original.status == "done":
                    self.store.set_status(row.id, "done")
                    continue
            post = row.post  # its text only: the pictures' bytes were never kept
            if post is None or not post.text:
                self.store.set_status(
                    row.id, "failed", error="interrupted by a restart, and its text is gone"
                )
                continue
            self._launch(row.id, row.created_at, post, row.text_hash, None, row.chat)
            resumed.append(row.id)
        return resumed

    def purge_expired(self) -> int:
        """Delete post text and evidence older than the retention; verdicts stay.

        Returns:
            How many checks were purged.
        """
        now = self.clock()
        # The index holds what a repeat may be answered from (the window), no more;
        # a check added meanwhile is newer than the window's start, so it stays.
        self.repeats.keep_since(now - self.window)
        if self.retention is None:
            return 0
        purged = self.store.purge(older_than=now - self.retention)
        if purged:
            log.info("purged the text of %d checks older than %s", purged, self.retention)
        return purged

    def admit(self, requester: Requester) -> None:
        """Refuse now, before any work, a request the limits would refuse at :meth:`submit`.

        The bots call this before they fetch a link, so that a refused request costs
        nothing (the same limits apply again when the post is submitted).

        Raises:
            RateLimitedError: a limit is reached; ``retry_after_s`` says when to come back.
        """
        self.limits.check(
            requester=self.user_hash(requester.platform, requester.user_id),
            platform=requester.platform,
            chat=self.chat_key(requester.platform, requester.chat_id),
            now=self.clock(),
        )

    def handle(self, check_id: str) -> CheckHandle | None:
        """The handle of a check submitted or resumed in this process and still running."""
        return self._by_id.get(check_id)

    async def submit(
        self, post: Post, requester: Requester, *, recheck: bool = False
    ) -> CheckHandle:
        """Start a check of ``post`` for ``requester``, or answer it from the store.

        Args:
            recheck: run the engine even when a fresh answer is stored.

        Raises:
            InvalidPostError: the post has no text, or a picture of it is refused.
            RateLimitedError: a rate limit or quota is reached; ``retry_after_s`` says when.
        """
        if not post.images:
            checkable_text(post.text)  # an empty post is refused before any limit counts
        now = self.clock()
        self.admit(requester)
        # Pictures are read first: the text in them is part of what is checked and keyed.
        post = await self.checker.read_post(post)
        text, _ = checkable_text(post.text)
        who = self.user_hash(requester.platform, requester.user_id)
        chat = self.chat_key(requester.platform, requester.chat_id)
        # A post checked in another reply language is another check: it repeats
        # and joins only checks of its own language.
        keyed = f"{text}\n[reply language: {post.language}]" if post.language else text
        pictures = [finding.sha256 for finding in post.findings]
        keyed += f"\n[pictures: {' '.join(pictures)}]" if pictures else ""
        digest = keyed_text_hash(self.secret, keyed)

        def record(**extra: Any) -> CheckRow:
            return self.store.create_check(
                platform=requester.platform,
                chat=chat,
                requester=who,
                post=post,
                text_hash=digest,
                **extra,
            )

        # One decision at a time per text, so that concurrent forwards of one post
        # see each other's run instead of each starting their own.
        entry = self._deciding.setdefault(digest, Turnstile())
        entry.users += 1
        try:
            async with entry.lock:
                return await self._decide(post, text, digest, record, now, recheck)
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._deciding[digest]

    async def _decide(
        self,
        post: Post,
        text: str,
        digest: str,
        record: Callable[..., CheckRow],
        now: dt.datetime,
        recheck: bool,
    ) -> CheckHandle:
        running = self._by_text.get(digest)
        if running is not None:  # the same text is being checked: wait on that run
            row = record(repeat_of=running.check_id, repeat_kind="exact")
            return self._join(row, running)
        vector = None
        if not recheck:
            answered, vector = await self._from_store(post, text, digest, record, now)
            if answered is not None:
                return answered
        if vector is None:
            vector = await self.repeats.vector(text)
        refuse_if_full(self.store, self.settings, len(self._by_text), now)
        row = record(forced=recheck)
        return self._launch(row.id, row.created_at, post, digest, vector, row.chat)

    async def _from_store(
        self, post: Post, text: str, digest: str, record: Callable[..., CheckRow], now: dt.datetime
    ) -> tuple[CheckHandle | None, np.ndarray | None]:
        """The answer to an exact or near repeat from the store, or ``None``; and the
        post's vector, when the near-repeat search needed it."""
        since = now - self.window
        repeat = await asyncio.to_thread(self.store.find_exact, digest, since)
        if repeat is not None:
            answered = self._answer(record, repeat, "exact", 1.0)
            if answered is not None:
                return answered, None
        if post.images:  # a near text is not the same picture
            return None, None
        vector = await self.repeats.vector(text)
        # The index search and the word alignment are CPU work: off the event loop.
        near = await asyncio.to_thread(self.repeats.original, vector, text, post.language, since)
        if near is not None:
            return self._answer(record, near[0], "near", near[1]), vector
        return None, vector

    def _answer(
        self,
        record: Callable[..., CheckRow],
        original: CheckRow,
        kind: RepeatKind,
        score: float,
    ) -> CheckHandle | None:
        report = self.store.get_report(original.id)
        if report is None:  # purged since: check it again
            return None
        row = record(status="done", repeat_of=original.id, repeat_kind=kind)
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        future.set_result(
            Outcome(row.id, report, kind, original.id, original.created_at, round(score, 4))
        )
        return CheckHandle(row.id, future)

    def _join(self, row: CheckRow, run: Run) -> CheckHandle:
        """A handle for ``row`` that waits on ``run``, which another request started."""

        def outcome(result: Outcome) -> Outcome:
            return Outcome(row.id, result.report, "exact", run.check_id, run.created_at, 1.0)

        return self._wait_on(run, row.id, outcome, own_row=False)

    def _wait_on(
        self,
        run: Run,
        check_id: str,
        outcome: Callable[[Outcome], Outcome],
        *,
        own_row: bool,
        on_leave: Callable[[], None] | None = None,
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
            if done.cancelled():
                if not own_row:
                    self.store.set_status(check_id, "cancelled")
                waiter.cancel()
            elif done.exception() is not None:
                if not own_row:
                    self.store.set_status(check_id, "failed", error=str(done.exception()))
                waiter.set_exception(done.exception())  # type: ignore[arg-type]
            else:
                if not own_row:
                    self.store.set_status(check_id, "done")
                waiter.set_result(outcome(done.result()))

        def leave() -> None:
            self._by_id.pop(check_id, None)
            if not own_row:
                self.store.set_status(check_id, "cancelled")
            if on_leave is not None:
                on_leave()
            run.leave()

        run.done.add_done_callback(settle)
        handle = CheckHandle(check_id, waiter, run, on_cancel=leave)
        self._by_id[check_id] = handle
        return handle

    def _launch(
        self,
        check_id: str,
        created_at: dt.datetime,
        post: Post,
        digest: str,
        vector: np.ndarray | None,
        chat: str,
    ) -> CheckHandle:
        run = Run(check_id, created_at)
        self._by_text[digest] = run
        handle = self._wait_on(run, check_id, lambda result: result, own_row=True)
        run.task = asyncio.create_task(self._run(run, post, digest, vector, chat))
        return handle

    async def _run(
        self, run: Run, post: Post, digest: str, vector: np.ndarray | None, chat: str
    ) -> None:
        check_id = run.check_id
        try:
            async with self._slots.slot(chat):
                self.store.set_status(check_id, "running")
                if vector is None:
                    vector = await self.repeats.vector(clean_post(post.text)[0])
                report = await self.checker.check(post, on_progress=run.push)
            self.store.save_report(check_id, report, vector=vector)
            self.repeats.add(check_id, vector)
            run.done.set_result(Outcome(check_id, report))
        except asyncio.CancelledError:
            # At shutdown the check goes back to the queue, for the next start to resume.
            self.store.set_status(check_id, "queued" if self._closing else "cancelled")
            run.done.cancel()
            raise
        except Exception as exc:
            reason = str(exc) if isinstance(exc, ZofiaError) else f"{type(exc).__name__}: {exc}"
            log.exception("check %s failed", check_id)
            self.store.set_status(check_id, "failed", error=reason)
            run.done.set_exception(CheckFailedError(f"The check failed: {reason}"))
        finally:
            if self._by_text.get(digest) is run:
                del self._by_text[digest]
            self._by_id.pop(check_id, None)
            run.changed.set()

    async def aclose(self) -> None:
        """Stop the runs still going; they are stored as queued and resume on the next start."""
        self._closing = True
        tasks = [run.task for run in self._by_text.values() if run.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
