"""The check service's front door: one async surface for the CLI, the bots and the API.

Every method is awaited, and every store call it makes runs on the service's own
threads (:class:`~bots.service.delivery.StoreThreads`), never on the event loop. A front
end calls it once per user action:

- :meth:`CheckService.take`: a request to check a post, taken whole and once: refused
  when it needs no work to refuse, admitted by the limits, its post read once (a link
  fetched, its images read; a text post before any limit counts it, so that an empty
  one costs nothing), and submitted: answered from the store when the same post (or a
  near copy) was checked within the freshness window, joined to a run under way for the
  same text, or run anew by the deployment's :class:`~bots.service.delivery.CardDelivery`
  (in this process, or queued for the workers). Every check is a row of the store from
  the moment it is submitted, so a crash loses nothing.
- :meth:`~CheckService.card_state`, :meth:`~CheckService.record_card`,
  :meth:`~CheckService.serving`: a card's state now, where a card was shown, and the
  cards and corrections a bot delivers while it runs (:mod:`.corrections`).
- :meth:`~CheckService.review`, :meth:`~CheckService.follow_up`, and what a chat reads
  and writes besides (:class:`~.chats.ChatRecords`).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from storage.api_keys import ApiKeys
from storage.keys import keyed_text_hash
from storage.reviews import Review
from storage.seen_messages import SEEN_FOR
from storage.store import CheckRow, CheckStore
from zofia_engine.ports import Answerer, Checker, TextEncoder
from zofia_engine.post import ReadPost
from zofia_engine.report import Report

from .api_keys import ApiKeyReads
from .chats import ChatRecords
from .corrections import record_card
from .delivery import DeliveryFactory, Intake, Parts, PostCard, Probes, StoreThreads
from .fair_slots import FairSlots
from .follow_ups import MAX_QUESTION, ask_follow_up
from .handles import CheckHandle, Turnstile, Waiters
from .limits import DAY, RequestLimits
from .naming import ChatNamer
from .pages import ReportPages
from .posts import costs_work, keep_media_reading, post_of
from .records import (
    Admission,
    CardPlace,
    CardState,
    FollowUp,
    Message,
    Outcome,
    Requester,
    ReviewRequest,
    SendCorrection,
)
from .refusals import ReviewRefused
from .repeats import NearRepeats
from .reviews import Reviewers, add_review
from .settings import ServiceSettings
from .shown import card_state, report_of

__all__ = ["CheckHandle", "CheckService", "EnginePorts", "ServiceSetup"]

log = logging.getLogger(__name__)


class EnginePorts(Checker, Answerer, Protocol):
    """The engine as the service takes it: it reads and checks posts, and answers
    readers' questions (the engine, or an in-process stand-in)."""


@dataclass(frozen=True)
class ServiceSetup:
    """What the composition root decided for a service besides its settings.

    Args:
        secret: the HMAC key of user ids, chat ids and text keys (the store's).
        token_reserve: what a check holds of the day's token budget until it ends
            (``llm.max_tokens_per_check``); required, so that no service falls back on
            a default cap.
        encoder: the sentence encoder that finds near repeats (the engine's, so that
            the model is loaded once); its dimension sizes the index.
        delivery: the mode (:class:`~bots.service.local.LocalDelivery`, or on PostgreSQL
            :class:`~bots.service.queue.delivery.QueuedDelivery`).
        retention: how long post text and evidence are kept (``None``: forever).
        clock: the time source; the store's by default, so both agree.
    """

    secret: bytes
    token_reserve: int
    encoder: TextEncoder
    delivery: DeliveryFactory
    retention: dt.timedelta | None = None
    clock: Callable[[], dt.datetime] | None = None


class CheckService:
    """The check service over ``store``, checking with ``engine``.

    Args:
        engine: what reads and checks posts and answers questions on reports.
        store: the open store.
        settings: the ``[service]`` section.
        setup: the rest of what the composition root decided (:class:`ServiceSetup`).
    """

    def __init__(
        self, engine: EnginePorts, store: CheckStore, settings: ServiceSettings, setup: ServiceSetup
    ) -> None:
        self.engine = engine
        self.store = store
        self.settings = settings
        self.secret = setup.secret
        self.retention = setup.retention
        self.clock = setup.clock or store.clock
        self.namer = ChatNamer(setup.secret)
        self.threads = StoreThreads()
        self.reviewers = Reviewers(settings.reviewers, setup.secret)
        self.limits = RequestLimits(store, settings, setup.token_reserve)
        self.repeats = NearRepeats(store, setup.encoder, settings)
        self.waiters = Waiters(store.checks)
        self.slots = FairSlots(settings.max_concurrent_checks)
        self.chats = ChatRecords(store, self.namer, self.threads)
        self.pages = ReportPages(store, self.threads)
        self.api_keys = ApiKeyReads(ApiKeys(store.database, setup.secret), self.threads)
        parts = Parts(
            store, settings, engine, self.repeats, self.waiters, self.limits, self.slots,
            self.threads, self.namer, self.window,
        )  # fmt: skip
        self.delivery = setup.delivery(parts)
        self._deciding: dict[str, Turnstile] = {}
        self._releasing: set[asyncio.Task[None]] = set()

    @property
    def window(self) -> dt.timedelta:
        return dt.timedelta(hours=self.settings.repeat_window_hours)

    async def start(self, *, resume: bool = True) -> list[str]:
        """Load the near-repeat index, purge what is past its retention, and start the
        delivery, which takes up checks a crash left unfinished (``resume``; in the queued
        mode a check whose worker died is the queue's to retry).

        Returns:
            The ids of the checks resumed (the others were failed with a reason).
        """
        await self.repeats.load(since=self.clock() - self.window)
        await self.purge_expired()
        return await self.delivery.start(resume=resume)

    async def aclose(self) -> None:
        """Stop the runs still going (they resume on the next start), or stop following
        the workers' events; then let the store's threads finish."""
        await self.delivery.aclose()
        await self.waiters.flush()  # the joined checks' statuses are written
        await asyncio.to_thread(self.threads.close)

    async def purge_expired(self) -> int:
        """Delete post text and evidence older than the retention (verdicts stay), and
        what else is kept for a while: attempts, tokens, stale deliveries, the messages taken.

        Returns:
            How many checks were purged.
        """
        return await self.threads.run(self._purge, self.clock())

    def _purge(self, now: dt.datetime) -> int:
        self.delivery.forget_stale(now)
        # The index holds what a repeat may be answered from (the window), no more; a
        # check added meanwhile is newer than the window's start, so it stays.
        self.repeats.keep_since(now - self.window)
        self.store.attempts.forget(before=now - DAY)  # no limit looks further back
        self.store.shown_cards.forget_tokens(now)  # an expired token edits nothing
        self.store.seen_messages.forget(before=now - SEEN_FOR)  # no redelivery comes later
        if self.retention is None:
            return 0
        purged = self.store.purge(older_than=now - self.retention)
        if purged:
            log.info("purged the text of %d checks older than %s", purged, self.retention)
        return purged

    def handle(self, check_id: str) -> CheckHandle | None:
        """The handle of a check submitted or resumed in this process and still running."""
        return self.waiters.get(check_id)

    @contextlib.asynccontextmanager
    async def take(
        self, message: Message, requester: Requester, *, recheck: bool = False
    ) -> AsyncIterator[CheckHandle]:
        """Take ``message`` from ``requester``, whole and once: the handle of its check,
        for the block; the request holds its place against its sender's limits until the
        block ends (however it ends), and the handle's ``checks_left`` says how many
        checks the sender may still ask today.

        Raises:
            InvalidPostError: the post has no text, a link cannot be fetched, or an
                image or a voice note is refused.
            RateLimitedError: a rate limit or quota is reached; ``retry_after_s`` says when.
        """
        if message.refuse is not None:
            message.refuse()
        # A post that costs nothing to read is read before any limit counts: an empty one
        # is refused at no cost (the empty-post rule is the engine's, in read).
        read = None if costs_work(message) else await self.engine.read(await post_of(message))
        async with self._admitted(requester) as admission:
            if message.turn is not None:
                await message.turn()
            if read is None:
                fetched = await message.fetch() if message.fetch is not None else None
                read = await self.engine.read(await post_of(message, fetched))
            handle = await self._submit(read, requester, admission, recheck)
            handle.checks_left = admission.left_today
            yield handle

    @contextlib.asynccontextmanager
    async def _admitted(self, requester: Requester) -> AsyncIterator[Admission]:
        """The request admitted (a refusal raises here) for the block, and released when
        it ends. An admission still on its thread when the caller is cancelled is released
        as soon as it lands: an attempt left open would hold a place in its sender's
        private line for 30 minutes."""
        admit = self.limits.admit
        landing = asyncio.ensure_future(
            self.threads.run(
                admit,
                requester=self.namer.user(requester.platform, requester.user_id),
                platform=requester.platform,
                chat=self.namer.chat(requester.platform, requester.chat_id),
                private=requester.private,
                now=self.clock(),
            )
        )
        try:
            admission = await asyncio.shield(landing)
        except asyncio.CancelledError:
            landing.add_done_callback(self._release_landed)
            raise
        try:
            yield admission
        finally:
            await asyncio.shield(self._release(admission))

    def _release_landed(self, landing: asyncio.Future[Admission]) -> None:
        if landing.cancelled() or landing.exception() is not None:
            return  # refused, or never written
        task = asyncio.get_running_loop().create_task(self._release(landing.result()))
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    async def _release(self, admission: Admission) -> None:
        """The request is answered: it no longer holds its sender's place. A failure is
        logged, never raised: the attempt's place then lapses by age."""
        try:
            await self.threads.run(self.store.attempts.end, admission.attempt_id)
        except Exception:
            log.warning("could not end attempt %s", admission.attempt_id, exc_info=True)

    async def _submit(
        self, read: ReadPost, requester: Requester, admission: Admission, recheck: bool
    ) -> CheckHandle:
        post, text = read.post, read.text
        # A post checked in another reply language is another check: it repeats and joins
        # only checks of its own language; "[pictures: …]" is in every stored image
        # post's key (text_hash): its word stays.
        keyed = f"{text}\n[reply language: {post.language}]" if post.language else text
        images = [finding.sha256 for finding in read.findings]
        keyed += f"\n[pictures: {' '.join(images)}]" if images else ""
        digest = keyed_text_hash(self.secret, keyed)
        now = self.clock()

        def record(**extra: Any) -> CheckRow:
            row = self.store.checks.create(
                platform=admission.platform,
                chat=admission.chat,
                requester=admission.requester,
                post=post,
                text_hash=digest,
                in_group=requester.in_group,
                **extra,
            )
            keep_media_reading(self.store, row, read)  # a run from the store reports it too
            return row

        intake = Intake(read, digest, admission, recheck, now, record)
        # One decision at a time per text, so that concurrent forwards of one post see
        # each other's run instead of each starting their own.
        entry = self._deciding.setdefault(digest, Turnstile())
        entry.users += 1
        try:
            async with entry.lock:
                return await self.delivery.submit(intake)
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._deciding[digest]

    async def follow_up(
        self, check_id: str, question: str, requester: Requester, *, language: str = ""
    ) -> FollowUp:
        """Answer a reader's ``question`` about check ``check_id`` from the report it shows
        in the requester's chat, admitted against their limits like a check and released
        once answered (:func:`~.follow_ups.ask_follow_up`).

        Raises:
            ValueError: the question is empty.
            CheckNotFoundError: no such check in the requester's chat.
            NoReportError: the check has no report (running, failed, or expired).
            RateLimitedError: a limit is reached; nothing was asked.
        """
        question = question.strip()[:MAX_QUESTION]
        if not question:
            raise ValueError("the question is empty")
        # Refused before any limit counts: a question about nothing costs nothing.
        report = await self.threads.run(self.chats.report_to_ask, check_id, requester)
        async with self._admitted(requester) as admission:
            asked = (check_id, report)
            return await ask_follow_up(self, admission, asked, question, language=language)

    async def share(
        self, check_id: str, requester: Requester
    ) -> tuple[Outcome, tuple[int, int], str, int | None] | None:
        """A shared check's card made anew for ``requester``'s chat
        (:meth:`~.chats.ChatRecords.copy`), admitted like any request (it is answered from
        the store, as a repeat is): what it shows, the votes on its verdict, its language,
        and how many checks the requester may still ask today; ``None`` when there is none
        to share.

        Raises:
            RateLimitedError: a limit is reached.
        """
        async with self._admitted(requester) as admission:
            copied = await self.threads.run(self.chats.copy, check_id, requester)
        return None if copied is None else (*copied, admission.left_today)

    async def review(self, request: ReviewRequest) -> Review:
        """Store a moderator's review (:func:`~.reviews.add_review`), with the corrections
        of the cards it changes queued as the mode queues them.

        Raises:
            ReviewRefused: chat reviews are off, or the review breaks a rule.
            CheckNotFoundError: no such check.
        """
        asker = request.requester
        everywhere = asker.platform == "cli" or self.reviewers.named(asker.platform, asker.user_id)
        if not everywhere and (not self.settings.chat_reviews or not asker.chat_id):
            raise ReviewRefused("chat_reviews_off")
        review = Review(
            id="",
            check_id=request.check_id,
            reviewer=self.namer.user(asker.platform, asker.user_id),
            platform=asker.platform,
            created_at=self.clock(),
            from_verdict="",
            to_verdict=request.verdict,
            note=request.note,
            link=request.link,
            chat="" if everywhere else self.namer.chat(asker.platform, asker.chat_id),
        )
        return await self.threads.run(add_review, self.store, review, self.delivery.queue_due)

    async def card_state(self, check_id: str) -> CardState | None:
        """What check ``check_id``'s card shows now (:func:`~.shown.card_state`)."""
        return await self.threads.run(card_state, self.store, check_id)

    async def record_card(self, check_id: str, place: CardPlace) -> None:
        """Record where a card of ``check_id`` was shown, so that a correction can reach
        it; never raises (a card not recorded only misses a correction)."""
        try:
            await self.threads.run(
                record_card, self.store, check_id, place, self.delivery.queue_due
            )
        except Exception:
            log.warning("could not record the card of check %s", check_id, exc_info=True)

    async def expect_card(self, check_id: str, platform: str, target: dict[str, Any]) -> None:
        """Have a card delivered elsewhere posted at ``target`` (:meth:`CardDelivery.expect
        <bots.service.delivery.CardDelivery.expect>`)."""
        await self.delivery.expect(check_id, platform, target)

    def serving(
        self, platform: str, post_card: PostCard, send: SendCorrection | None = None
    ) -> contextlib.AbstractAsyncContextManager[Probes]:
        """Deliver ``platform``'s cards and corrections while the block runs (by the mode:
        a poll of the store, or the queue's jobs); what a health probe may ask."""
        return self.delivery.serving(platform, post_card, send)

    async def report_for(self, check_id: str) -> tuple[CheckRow, Report] | None:
        """A check and the report it shows in its chat (:func:`~.shown.report_of`)."""
        return await self.threads.run(report_of, self.store, check_id)

    async def ping(self) -> None:
        """Read the store once (health probes): raises when it cannot."""
        await self.threads.run(self.store.ping)
