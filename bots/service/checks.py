"""The check service: one platform-neutral front door for the CLI and the bots.

``submit(post, requester)`` answers at once from the store when the same post
(or a near copy, by SBERT cosine) was checked within the freshness window,
joins a run already under way for the same text, and otherwise queues a new
run of the engine. Every check is a row in SQLite from the moment it is
submitted, so a crash loses nothing: :meth:`CheckService.start` resumes the
checks left queued or running, or fails them with a stored reason.

Given a :class:`~bots.service.card_delivery.CardDelivery` (the queued mode, on
PostgreSQL), the service runs no engine itself: a new check is queued for the
worker processes in the same transaction that writes it (or joins the check of the
same text already queued or running there), and its card is delivered by a job.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from storage.keys import keyed_text_hash
from storage.other_chats import run_key
from storage.reviews import Review
from storage.store import CheckRow, CheckStore
from zofia_engine.ports import Answerer, Checker, TextEncoder
from zofia_engine.post import Post, ReadPost

from .card_delivery import CardDelivery
from .chat_operations import ChatOperations
from .corrections import Reviewers, review_check
from .follow_ups import ask_follow_up
from .handles import CheckHandle, Turnstile, Waiters, joined
from .limits import DAY, RequestLimits
from .local_runs import LocalRuns
from .records import Admission, CheckFailedError, FollowUp, Outcome, Requester
from .repeats import NearRepeats
from .settings import ServiceSettings
from .stored_answers import answer_from_store

__all__ = ["CheckFailedError", "CheckHandle", "CheckService", "Outcome", "Requester"]

log = logging.getLogger(__name__)


class CheckService:
    """Submits posts to the engine through the store.

    Args:
        checker: what reads and checks a post (the engine, or a stand-in in tests).
        answerer: what answers readers' questions on a report (the engine too).
        store: the open store.
        settings: the ``[service]`` section.
        secret: the HMAC key for user ids, chat ids and text keys.
        encoder: the sentence encoder that finds near repeats (the engine's, so that
            the model is loaded once); its dimension sizes the index.
        clock: the time source; the store's by default, so both agree.
        retention: how long post text and evidence are kept (``None``: forever);
            :meth:`start` and :meth:`purge_expired` delete what is older.
        delivery: the queued mode: checks run on worker processes and their cards are
            posted by deliver jobs (``None``: the engine runs here, the bots post).
        token_reserve: what a check holds of the day's token budget until it ends
            (``llm.max_tokens_per_check``); required, so that no service falls back
            on a default cap.
    """

    def __init__(
        self,
        checker: Checker,
        store: CheckStore,
        settings: ServiceSettings,
        *,
        secret: bytes,
        answerer: Answerer,
        encoder: TextEncoder,
        clock: Callable[[], dt.datetime] | None = None,
        retention: dt.timedelta | None = None,
        delivery: CardDelivery | None = None,
        token_reserve: int,
    ) -> None:
        self.checker = checker
        self.answerer = answerer
        self.retention = retention
        self.store = store
        self.settings = settings
        self.secret = secret
        self.clock = clock or store.clock
        self.delivery = delivery
        self.queued = delivery is not None  # the mode the composition root decided
        self.chats = ChatOperations(store, secret)
        self.reviewers = Reviewers(settings.reviewers, secret)
        self.limits = RequestLimits(store, settings, token_reserve)
        self.repeats = NearRepeats(store, encoder, settings)
        self.waiters = Waiters(store.checks)
        self.runs = LocalRuns(checker, store, self.repeats, self.waiters, settings)
        self._deciding: dict[str, Turnstile] = {}

    @property
    def window(self) -> dt.timedelta:
        return dt.timedelta(hours=self.settings.repeat_window_hours)

    async def start(self, *, resume: bool = True) -> list[str]:
        """Load the near-repeat index and take up checks a crash left unfinished.

        In the queued mode nothing is resumed here (a check whose worker died is the
        queue's to retry): the service begins following the workers' events instead.

        Args:
            resume: take up unfinished checks (a one-shot CLI run leaves them to the bot).

        Returns:
            The ids of the checks resumed (the others were failed with a reason).
        """
        await self.repeats.load(since=self.clock() - self.window)
        if self.delivery is not None:
            await asyncio.to_thread(self.purge_expired)
            await self.delivery.start()
            return []
        await asyncio.to_thread(self.purge_expired)
        if not resume:  # a one-shot run beside a bot leaves the bot's requests alone
            return []
        # Taking up the store's unfinished work: nobody waits on an attempt begun before.
        await asyncio.to_thread(self.store.attempts.end_open)
        return self.runs.resume_unfinished()

    def purge_expired(self) -> int:
        """Delete post text and evidence older than the retention; verdicts stay. In the
        queued mode, also blank the chat ids of deliveries long overdue.

        Returns:
            How many checks were purged.
        """
        now = self.clock()
        if self.delivery is not None:
            self.delivery.forget_stale(now)
        # The index holds what a repeat may be answered from (the window), no more;
        # a check added meanwhile is newer than the window's start, so it stays.
        self.repeats.keep_since(now - self.window)
        self.store.attempts.forget(before=now - DAY)  # no limit looks further back
        self.store.shown_cards.forget_tokens(now)  # an expired token edits nothing
        if self.retention is None:
            return 0
        purged = self.store.purge(older_than=now - self.retention)
        if purged:
            log.info("purged the text of %d checks older than %s", purged, self.retention)
        return purged

    def admit(self, requester: Requester) -> Admission:
        """Count the limits and record the request, before any work (blocking): the bots
        call this before they fetch a link or decode an image, so that a refused request
        costs nothing, and an admitted one costs its sender whatever then fails. Pass
        the admission to :meth:`submit`, and to :meth:`release` once answered.

        Raises:
            RateLimitedError: a limit is reached; ``retry_after_s`` says when to come back.
        """
        return self.limits.admit(
            requester=self.chats.user_hash(requester.platform, requester.user_id),
            platform=requester.platform,
            chat=self.chats.chat_key(requester.platform, requester.chat_id),
            private=requester.private,
            now=self.clock(),
        )

    def release(self, admission: Admission) -> None:
        """The request is answered (a card, a sentence, or given up): it no longer holds
        its sender's place in a private chat (blocking). A failure is logged, never
        raised: the attempt's place then lapses by age."""
        try:
            self.store.attempts.end(admission.attempt_id)
        except Exception:
            log.warning("could not end attempt %s", admission.attempt_id, exc_info=True)

    def handle(self, check_id: str) -> CheckHandle | None:
        """The handle of a check submitted or resumed in this process and still running."""
        return self.waiters.get(check_id)

    async def submit(
        self,
        post: Post,
        requester: Requester,
        *,
        recheck: bool = False,
        admission: Admission | None = None,
    ) -> CheckHandle:
        """Start a check of ``post`` for ``requester``, or answer it from the store.

        Args:
            recheck: run the engine even when a fresh answer is stored.
            admission: what :meth:`admit` gave for this request (``None``: it is
                admitted now).

        Raises:
            InvalidPostError: the post has no text, or an image of it is refused.
            RateLimitedError: a rate limit or quota is reached; ``retry_after_s`` says when.
        """
        # A post with no images is read before any limit counts: an empty one is refused
        # at no cost (the empty-post rule is the engine's, in read).
        read = None if post.images else await self.checker.read(post)
        now = self.clock()
        # Every store call below runs off the event loop: a write held elsewhere (another
        # process on PostgreSQL) makes this request wait, not the bot.
        if admission is None:
            admission = await asyncio.to_thread(self.admit, requester)
        # Images are read once admitted: the text in them is part of what is checked and
        # keyed.
        read = read or await self.checker.read(post)
        post, text = read.post, read.text
        # A post checked in another reply language is another check: it repeats
        # and joins only checks of its own language.
        keyed = f"{text}\n[reply language: {post.language}]" if post.language else text
        images = [finding.sha256 for finding in read.findings]
        # "[pictures: …]" is in every stored image post's key (text_hash): its word stays.
        keyed += f"\n[pictures: {' '.join(images)}]" if images else ""
        digest = keyed_text_hash(self.secret, keyed)

        def record(**extra: Any) -> CheckRow:
            return self.store.checks.create(
                platform=admission.platform,
                chat=admission.chat,
                requester=admission.requester,
                post=post,
                text_hash=digest,
                in_group=requester.in_group,
                **extra,
            )

        # One decision at a time per text, so that concurrent forwards of one post
        # see each other's run instead of each starting their own.
        entry = self._deciding.setdefault(digest, Turnstile())
        entry.users += 1
        try:
            async with entry.lock:
                return await self._decide(read, digest, record, now, recheck, admission)
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._deciding[digest]

    async def _decide(
        self,
        read: ReadPost,
        digest: str,
        record: Callable[..., CheckRow],
        now: dt.datetime,
        recheck: bool,
        who: Admission,
    ) -> CheckHandle:
        if self.delivery is not None:
            return await self._queue(self.delivery, read, digest, record, now, recheck, who)
        running = self.runs.running(digest, who.platform, who.chat)
        if running is not None:  # the same text is being checked: wait on that run
            original, run = running
            row = await asyncio.to_thread(record, repeat_of=original.id, repeat_kind="exact")
            return self.waiters.wait_on(run, row.id, joined(row, original), own_row=False)
        vector = None
        if not recheck:
            answered, vector = await answer_from_store(
                self.store, self.repeats, read, digest, record, now - self.window, who
            )
            if answered is not None:
                return answered
        if vector is None:
            vector = await self.repeats.vector(read.text)
        row = await asyncio.to_thread(self._bounded_row, record, recheck, now, who)
        return self.runs.launch(row, read, digest, vector)

    async def _queue(
        self,
        delivery: CardDelivery,
        read: ReadPost,
        digest: str,
        record: Callable[..., CheckRow],
        now: dt.datetime,
        recheck: bool,
        who: Admission,
    ) -> CheckHandle:
        """The queued mode: answer from the store, else join the run of this text on the
        workers or queue a new one; either way follow that run from here."""
        if not recheck:
            answered, _ = await answer_from_store(
                self.store, self.repeats, read, digest, record, now - self.window, who
            )
            if answered is not None:
                return answered
        row, original = await asyncio.to_thread(
            self._join_or_queue, delivery, digest, record, recheck, now, who
        )
        # The worker keeps every row's status (a replica shutting down cancels nothing);
        # a requester who leaves only gives up the card.
        run = delivery.run_of(original.id, original.created_at)
        handle = self.waiters.wait_on(
            run,
            row.id,
            joined(row, original),
            own_row=True,
            on_leave=partial(delivery.drop, row.id),
            delivered_elsewhere=True,
        )
        delivery.settle_soon(original.id)  # it may have ended before this process listened
        return handle

    def _bounded_row(
        self, record: Callable[..., CheckRow], recheck: bool, now: dt.datetime, who: Admission
    ) -> CheckRow:
        """A new check's row, with its reserve of the day's tokens, written only if the
        bounds and shares allow it, in one write transaction (blocking)."""
        with self.store.write():
            self.limits.refuse_if_full(who, self.runs.count, now)
            return record(forced=recheck, tokens=self.limits.token_reserve)

    def _join_or_queue(
        self,
        delivery: CardDelivery,
        digest: str,
        record: Callable[..., CheckRow],
        recheck: bool,
        now: dt.datetime,
        who: Admission,
    ) -> tuple[CheckRow, CheckRow]:
        """In one write transaction (one lock across every process on the database): join
        the check of this text queued or running, or write a new check and its job."""
        with self.store.write():
            where = {"platform": who.platform, "chat": who.chat}
            running = None if recheck else self.store.checks.in_flight(digest, **where)
            if running is not None:
                return record(repeat_of=running.id, repeat_kind="exact"), running
            self.limits.refuse_if_full(who, delivery.pending(), now)
            row = record(forced=recheck, tokens=self.limits.token_reserve)
            delivery.queue(row.id, None if recheck else run_key(row))
            return row, row

    async def review(
        self,
        check_id: str,
        platform: str,
        user_id: str,
        verdict: str,
        note: str,
        link: str = "",
        *,
        chat_id: str = "",
    ) -> Review:
        """A review of a check's verdict (a repeat's: its original's), written off the
        event loop. A reviewer the settings name (or the operator: ``platform`` "cli")
        reviews for every chat; anyone else, a chat's moderator, for ``chat_id`` only: the
        change shows on that chat's cards and repeats alone (:mod:`storage.reviews`).
        Cards shown with another verdict where it applies are due a correction
        (:mod:`bots.service.corrections`).

        Raises:
            ReviewLimitError: the reviewer, or this check in this chat, reached its limit.
            ValueError: chat reviews are off, an unknown verdict, a long note, a link
                that is no address, a check with no verdict, or a chat's moderator
                calling a scam true.
            CheckNotFoundError: no such check.
        """
        everywhere = platform == "cli" or self.reviewers.named(platform, user_id)
        if not everywhere and (not self.settings.chat_reviews or not chat_id):
            raise ValueError("reviews by a chat's moderators are off on this bot")
        chat = "" if everywhere else self.chats.chat_key(platform, chat_id)
        reviewer = self.chats.user_hash(platform, user_id)
        add = partial(review_check, self.store, reviewer=reviewer, platform=platform, chat=chat)
        review = partial(add, check_id, verdict=verdict, note=note, link=link, queued=self.queued)
        return await asyncio.to_thread(review)

    async def aclose(self) -> None:
        """Stop the runs still going; they are stored as queued and resume on the next
        start. In the queued mode, stop following events: checks go on on the workers,
        and their cards are delivered."""
        if self.delivery is not None:
            await self.delivery.aclose()
        else:
            await self.runs.aclose()
        await self.waiters.flush()  # the joined checks' statuses are written

    async def follow_up(
        self, check_id: str, question: str, requester: Requester, *, language: str = ""
    ) -> FollowUp:
        """Answer a reader's ``question`` about check ``check_id`` from the report it shows
        (a moderator's review in force), admitted against ``requester``'s limits like a
        check and released once answered (:func:`bots.service.follow_ups.ask_follow_up`).

        Raises:
            ValueError: the question is empty.
            CheckNotFoundError: no such check in the requester's chat.
            NoReportError: the check has no report (running, failed, or expired).
            RateLimitedError: a limit is reached; nothing was asked.
        """
        return await ask_follow_up(self, check_id, question, requester, language=language)
