"""One check from a chat request to its verdict card, the same on every platform.

:func:`run_check` hands the request to the check service's front door once
(:meth:`~bots.service.checks.CheckService.take`: refused, admitted, its post read and
submitted there), follows its progress (or, when checks run on workers, leaves the card
to a deliver job), and ends with the verdict card or one sentence saying what went
wrong.

A platform supplies what it knows in a :class:`CheckRequest` (the text, who asked,
how its images are fetched) and how a check shows there in a :class:`Screen` (the
progress, the card, a sentence). Nothing here knows a platform.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Protocol

from bots.render.card import VerdictCard, verdict_card
from bots.render.progress import follow_progress
from bots.render.sentences import INTERRUPTED, OVERDUE, RESTARTING, error_sentence
from bots.render.words import Words, words_for
from bots.service.checks import CheckHandle, CheckService
from bots.service.records import CheckFailedError, Failed, Message, Outcome, Requester
from bots.service.refusals import RateLimitedError
from zofia_engine.errors import InvalidPostError, ZofiaError
from zofia_engine.post import ProgressEvent
from zofia_engine.report import Report

from .quiet import DEFAULT_MIN_CONFIDENCE, unasked_gets_card
from .turns import Ticket

__all__ = [
    "CheckRequest",
    "Screen",
    "card_for",
    "card_target",
    "failure_for",
    "run_check",
    "shutting_down",
    "target_words",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckRequest:
    """What a platform asks to have checked, for whom, and how a chat hears of it.

    Args:
        message: what to check (:class:`~bots.service.records.Message`): its text, how
            its images are fetched (refusing what the platform declares too large), what
            the platform refuses before any download, where the post came from, and the
            chat's language (``""``: English): the panel writes in it, and the card's
            fixed words and the sentences said here are in it when the bot has them
            (:func:`~bots.render.words.words_for`).
        requester: who asked, where.
        on_refused: called when a refusal came before the request cost any work (the
            chat's cooldown is given back).
        unasked: nobody asked (a group's auto-check): no progress is shown; only a sure
            alarm gets the card, another verdict ``react`` (see
            :func:`~.quiet.group_answer`), and an opinion, a greeting, satire or an
            unreadable image post nothing.
        has_media: the request came with images or a voice note.
        min_confidence: an unasked check's least confidence for a card (the chat's
            ``quiet_min_confidence``).
        react: the quiet answer to an unasked check that gets no card (Telegram: a
            reaction on the post); never raises. ``None``: nothing.
        ticket: its place in its private chat's line (:mod:`.turns`): once admitted, it
            waits for its turn, saying how many are ahead; left once it is answered.
    """

    message: Message
    requester: Requester
    on_refused: Callable[[], None] | None = None
    unasked: bool = False
    has_media: bool = False
    min_confidence: float = DEFAULT_MIN_CONFIDENCE
    react: Callable[[], Awaitable[None]] | None = None
    ticket: Ticket | None = None

    @property
    def language(self) -> str:
        return self.message.language


class Screen(Protocol):
    """How a check shows on one platform: a Telegram reply, a Discord interaction."""

    #: the platform API's own errors: logged as a warning, not as a bug
    platform_errors: ClassVar[tuple[type[Exception], ...]]

    async def open_progress(self, check_id: str) -> None:
        """Show that the check has begun (Telegram: the "checking…" reply, with Cancel)."""

    async def show_progress(self, lines: list[str]) -> bool:
        """Show the progress so far; never raises (progress is a courtesy).

        Returns:
            ``False`` once nothing more can be shown here.
        """

    async def show_waiting(self, ahead: int) -> None:
        """Say that the request waits its turn behind ``ahead`` others of its private
        chat (:func:`~bots.render.sentences.waiting_sentence`); its progress replaces this. Never
        raises."""

    async def show_card(self, card: VerdictCard) -> None:
        """Show the verdict card, in place of the progress."""

    async def say(self, sentence: str) -> None:
        """Say one sentence in place of the progress (what went wrong)."""

    async def refuse(self, exc: RateLimitedError) -> None:
        """Say that a limit refused the request (a platform may answer a burst of
        refusals to one chat at once: see :func:`~bots.render.sentences.refusals_sentence`)."""

    def delivery_target(self, request: CheckRequest, checks_left: int | None) -> dict[str, Any]:
        """Where a deliver job posts the card of ``request`` (after :meth:`open_progress`;
        an unasked check's target keeps its ``min_confidence``), with what the card is made
        from besides the outcome (:func:`card_target`)."""


def shutting_down() -> bool:
    """Whether the running task itself is being cancelled (not just the check it waits on)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


@dataclass
class _Reached:
    """How far a request got: what its end says, and what it gives back."""

    started: bool = False  # it cost work: a download, a check
    submitted: bool = False  # its check was submitted: a shutdown hands it back to the queue
    queued: bool = False  # a deliver job posts its card
    handle: CheckHandle | None = None


async def run_check(
    service: CheckService, request: CheckRequest, screen: Screen, *, progress_interval_s: float
) -> None:
    """Check ``request`` and show it on ``screen``, from progress to the verdict card,
    or one sentence saying what went wrong. A repeat answered from the store gets the
    card at once; when deliver jobs post the cards, this shows progress only.

    Every request ends in a card or one sentence: an admitted one within ``[service]
    answer_within_s`` (its turn, an engine slot and its check together; past it the wait
    is given up and :data:`~bots.render.sentences.OVERDUE` said). What it holds is given
    back as soon as its answer is known, before that answer is said (a refusal may be
    held a while to be said once per burst): its place in its private chat's line, so
    that the next in line starts, and its admission, so that it no longer counts as
    under way.

    Args:
        service: the check service.
        progress_interval_s: the least time between two progress edits.
    """
    reached = _Reached()
    try:
        try:
            answer = _answer(service, request, screen, reached, progress_interval_s)
            await _answer_within(service, request, screen, reached, answer)
        finally:
            if request.ticket is not None:
                request.ticket.leave()
    except asyncio.CancelledError as exc:
        if shutting_down():  # the bot is stopping: say so, then let the task end
            await _handed_back(request, screen, reached)
            raise
        # cancelled by the requester, or another
        await screen.say(error_sentence(exc, words_for(request.language)))
    except Exception as exc:
        await _failed(service, request, screen, exc, started=reached.started)


async def _answer_within(
    service: CheckService,
    request: CheckRequest,
    screen: Screen,
    reached: _Reached,
    answer: Coroutine[Any, Any, None],
) -> None:
    """``answer`` (:func:`_answer`), given up past ``[service] answer_within_s``: the asker is told
    (unless a deliver job posts the card), and the check stops when nobody else waits."""
    within = service.settings.answer_within_s
    deadline = asyncio.timeout(within)
    try:
        async with deadline:
            await answer
    except TimeoutError:
        if not deadline.expired():  # a timeout of something inside: a failure
            raise
        chat = service.namer.log_name(request.requester.platform, request.requester.chat_id)
        log.warning("request in chat %s not answered within %.0f s: given up", chat, within)
        if reached.queued:  # the card still comes, from its deliver job
            return
        if reached.handle is not None:
            reached.handle.cancel()
        if not request.unasked:
            await screen.say(words_for(request.language)(OVERDUE))


async def _answer(
    service: CheckService,
    request: CheckRequest,
    screen: Screen,
    reached: _Reached,
    progress_interval_s: float,
) -> None:
    """Hand the request to the service, then show its check to its end."""

    async def turn() -> None:  # admitted: from here the request counts, and costs work
        await _wait_turn(request.ticket, screen)
        reached.started = True

    message = replace(request.message, turn=turn)
    async with service.take(message, request.requester) as handle:
        reached.handle, reached.submitted = handle, True
        # Queued on workers, a deliver job posts the card, from whichever replica is alive
        # then; this one shows progress while it is.
        reached.queued = handle.delivered_elsewhere and not handle.done
        live = not handle.done and not request.unasked
        if live:
            await screen.open_progress(handle.check_id)
        if reached.queued:  # a deliver job posts the card: tell it where
            target = screen.delivery_target(request, handle.checks_left)
            await service.expect_card(handle.check_id, request.requester.platform, target)
        early = _Early()
        if live:
            events = early.watch(handle.events())
            words = words_for(request.language)
            await follow_progress(events, screen.show_progress, progress_interval_s, words)
        elif request.unasked and not reached.queued and not handle.done:
            async for _ in early.watch(handle.events()):  # a quiet group decides from it
                pass
        if reached.queued:
            if handle.cancelled:  # the requester pressed Cancel: no card comes
                raise asyncio.CancelledError
            return
        shown = True
        if early.report is not None:  # the verdict first, completed in place below
            first = Outcome(handle.check_id, early.report)
            shown = await _show_card(request, screen, first, handle.checks_left)
        outcome = await handle.result()
    if shown:
        await _show_card(request, screen, outcome, handle.checks_left, decided=early.decided)


class _Early:
    """The early report of a check, caught from its events (``verdict_ready``): the
    verdict the evidence fixed before the debate, shown while the debate runs."""

    def __init__(self) -> None:
        self.report: Report | None = None

    @property
    def decided(self) -> bool:
        return self.report is not None

    async def watch(self, events: AsyncIterator[ProgressEvent]) -> AsyncIterator[ProgressEvent]:
        """``events`` until the early report: progress stops there (its card shows)."""
        async for event in events:
            if event.kind == "verdict_ready" and event.report is not None:
                self.report = event.report
                return
            yield event


async def _handed_back(request: CheckRequest, screen: Screen, reached: _Reached) -> None:
    """At shutdown, tell the asker what became of a request the grace cut short: a check
    submitted goes back to the queue and resumes at the next start
    (:data:`~bots.render.sentences.INTERRUPTED`); a request not yet submitted is not kept
    (:data:`~bots.render.sentences.RESTARTING`). A card a deliver job posts still comes,
    and nobody asked an unasked check: nothing is said then."""
    if reached.queued or request.unasked:
        return
    sentence = INTERRUPTED if reached.submitted else RESTARTING
    await screen.say(words_for(request.language)(sentence))


async def _show_card(
    request: CheckRequest,
    screen: Screen,
    outcome: Outcome,
    checks_left: int | None,
    *,
    decided: bool = False,
) -> bool:
    """Show ``outcome``'s verdict card on ``screen``, unless the post was unasked and its
    verdict is not one an unasked post gets a card for; whether it was shown.
    ``decided``: an early card of the same verdict already decided that (the full card
    completes it in place)."""
    if (
        request.unasked
        and not decided
        and not await unasked_gets_card(outcome.report, request.min_confidence, request.react)
    ):
        return False
    card = card_for(outcome, card_target(request.message, checks_left))
    await screen.show_card(card)
    return True


async def _wait_turn(ticket: Ticket | None, screen: Screen) -> None:
    """Wait for the request's turn in its private chat's line, saying how many are
    ahead when any are."""
    if ticket is None:
        return
    if ticket.ahead:
        await screen.show_waiting(ticket.ahead)
    await ticket.ready()


def card_target(message: Message, checks_left: int | None) -> dict[str, Any]:
    """What a verdict card is made from besides the outcome, as plain JSON values: where
    the post came from and when, how many checks its asker may still ask today, and the
    chat's language (the post's reply language). Each platform's deliver-job target
    holds it, so that a queued card is made as a live one is (see :func:`card_for`)."""
    return {
        "origin": message.origin,
        "published": message.published.isoformat() if message.published else "",
        "checks_left": checks_left,
        "language": message.language,
    }


def card_for(outcome: Outcome, target: Mapping[str, Any]) -> VerdictCard:
    """The verdict card of ``outcome``, live or from a deliver job: ``target`` is
    :func:`card_target`'s (in a deliver job, the target recorded for it). The card says
    how many checks the asker has left today when few are; a target without that count
    (recorded before it held one) gets the card without that line, and one without its
    language, English words."""
    published = str(target.get("published") or "")
    left = target.get("checks_left")
    return verdict_card(
        outcome,
        origin=str(target.get("origin") or ""),
        published=dt.date.fromisoformat(published) if published else None,
        checks_left=left if isinstance(left, int) else None,
        words=target_words(target),
    )


def failure_for(failed: Failed, target: Mapping[str, Any]) -> str:
    """What a deliver job posts for a check that failed, in :func:`target_words`."""
    return error_sentence(CheckFailedError(failed.reason), target_words(target))


def target_words(target: Mapping[str, Any]) -> Words:
    """The words of a deliver job's ``target``: its chat's language, else English."""
    return words_for(str(target.get("language") or ""))


async def _failed(
    service: CheckService, request: CheckRequest, screen: Screen, exc: Exception, *, started: bool
) -> None:
    """Say what went wrong, in one sentence; what failed inside goes to the log."""
    requester = request.requester
    chat = service.namer.log_name(requester.platform, requester.chat_id)  # never the id
    if isinstance(exc, ZofiaError) and not started and request.on_refused is not None:
        request.on_refused()  # refused before it cost any work
    # Nobody asked an automatic check: a limit's refusal, or an image that cannot be
    # read, is no reason to speak in the group (it gets a card, a reaction or nothing).
    quiet = isinstance(exc, RateLimitedError) or (
        request.has_media and isinstance(exc, InvalidPostError)
    )
    if request.unasked and quiet:
        log.info("unasked post in chat %s not checked: %s", chat, exc)
        return
    if isinstance(exc, (RateLimitedError, InvalidPostError)):  # a refusal, not a failure
        log.info("request in chat %s refused: %s", chat, exc)
        if isinstance(exc, RateLimitedError):
            await screen.refuse(exc)
            return
    elif isinstance(exc, (ZofiaError, *screen.platform_errors)):
        log.warning("check for chat %s failed: %s", chat, exc, exc_info=True)
    else:
        log.error("check for chat %s failed", chat, exc_info=exc)
    await screen.say(error_sentence(exc, words_for(request.language)))
