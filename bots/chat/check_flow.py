"""One check from a chat request to its verdict card, the same on every platform.

:func:`run_check` admits the request, downloads its images, builds the post, submits
it, follows its progress (or, when checks run on workers, leaves the card to a deliver
job), and ends with the verdict card or one sentence saying what went wrong.

A platform supplies what it knows in a :class:`CheckRequest` (the text, who asked,
how its images are fetched) and how a check shows there in a :class:`Screen` (the
progress, the card, a sentence). Nothing here knows a platform.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from bots.render.card import VerdictCard, verdict_card
from bots.render.progress import follow_progress
from bots.render.sentences import INTERRUPTED, OVERDUE, RESTARTING, error_sentence
from bots.render.words import words_for
from bots.service.checks import CheckHandle
from bots.service.posts import post_from_message
from bots.service.records import Admission, Outcome, RateLimitedError, Requester
from zofia_engine.errors import InvalidPostError, ZofiaError
from zofia_engine.post import Post

from .logs import log_chat
from .quiet import DEFAULT_MIN_CONFIDENCE, unasked_gets_card
from .store_calls import StoreCalls, off_loop
from .turns import Ticket

__all__ = [
    "CheckRequest",
    "Screen",
    "card_for",
    "card_target",
    "run_check",
    "shutting_down",
]

log = logging.getLogger(__name__)

#: the images of a request, each as ``(bytes, media type)``
Images = list[tuple[bytes, str]]


async def _no_images() -> Images:
    return []


@dataclass(frozen=True)
class CheckRequest:
    """What a platform asks to have checked, and for whom.

    Args:
        text: the post's text (with images, their caption; it may be empty).
        requester: who asked, where.
        download: fetches the images, refusing what the platform declares too large.
        refuse: refuses, before the limits count the request, what needs no download
            (Discord: too many images, an empty text).
        on_refused: called when a refusal came before the request cost any work (the
            chat's cooldown is given back).
        origin, published: where the post came from and when, if known.
        language: the chat's language (``""``: English): the panel writes in it, and
            the card's fixed words and the sentences said here are in it when the bot
            has them (:func:`~bots.render.words.words_for`).
        allow_private_urls: let a link to a private address be fetched (tests only).
        unasked: nobody asked (a group's auto-check): no progress is shown; only a sure
            alarm gets the card, another verdict ``react`` (see
            :func:`~.quiet.group_answer`), and an opinion, a greeting, satire or an
            unreadable image post nothing.
        has_images: the request came with images.
        min_confidence: an unasked check's least confidence for a card (the chat's
            ``quiet_min_confidence``).
        react: the quiet answer to an unasked check that gets no card (Telegram: a
            reaction on the post); never raises. ``None``: nothing.
        ticket: its place in its private chat's line (:mod:`.turns`): once admitted, it
            waits for its turn, saying how many are ahead; left once it is answered.
        read_text: reads the rest of the post's text once the request is admitted
            (Discord: a post too long to paste, sent as a ``.txt`` file); it follows
            ``text``.
    """

    text: str
    requester: Requester
    download: Callable[[], Awaitable[Images]] = _no_images
    refuse: Callable[[], None] | None = None
    on_refused: Callable[[], None] | None = None
    origin: str = ""
    published: dt.date | None = None
    language: str = ""
    allow_private_urls: bool = False
    unasked: bool = False
    has_images: bool = False
    min_confidence: float = DEFAULT_MIN_CONFIDENCE
    react: Callable[[], Awaitable[None]] | None = None
    ticket: Ticket | None = None
    read_text: Callable[[], Awaitable[str]] | None = None


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

    def delivery_target(self, post: Post, request: CheckRequest) -> dict[str, Any]:
        """Where a deliver job posts the card of ``request`` (after :meth:`open_progress`;
        an unasked check's target keeps its ``min_confidence``)."""


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
    calls: StoreCalls, request: CheckRequest, screen: Screen, *, progress_interval_s: float
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
        calls: the check service, its store calls awaited off the event loop.
        progress_interval_s: the least time between two progress edits.
    """
    reached = _Reached()
    try:
        try:
            if request.refuse is not None:
                request.refuse()
            # Before a link or an image is fetched: from here the request counts against
            # its sender's limits, whatever then fails.
            async with calls.admitted(request.requester) as admission:
                answer = _answer(calls, request, screen, admission, reached, progress_interval_s)
                await _answer_within(calls, request, screen, reached, answer)
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
        await _failed(request, screen, exc, started=reached.started)


async def _answer_within(
    calls: StoreCalls,
    request: CheckRequest,
    screen: Screen,
    reached: _Reached,
    answer: Coroutine[Any, Any, None],
) -> None:
    """``answer`` (:func:`_answer`), given up past ``[service] answer_within_s``: the asker is told
    (unless a deliver job posts the card), and the check stops when nobody else waits."""
    within = calls.service.settings.answer_within_s
    deadline = asyncio.timeout(within)
    try:
        async with deadline:
            await answer
    except TimeoutError:
        if not deadline.expired():  # a timeout of something inside: a failure
            raise
        chat = log_chat(request.requester.platform, request.requester.chat_id)
        log.warning("request in chat %s not answered within %.0f s: given up", chat, within)
        if reached.queued:  # the card still comes, from its deliver job
            return
        if reached.handle is not None:
            reached.handle.cancel()
        if not request.unasked:
            await screen.say(words_for(request.language)(OVERDUE))


async def _answer(
    calls: StoreCalls,
    request: CheckRequest,
    screen: Screen,
    admission: Admission,
    reached: _Reached,
    progress_interval_s: float,
) -> None:
    """Wait for the request's turn, submit its post and show the check to its end."""
    service = calls.service
    await _wait_turn(request.ticket, screen)
    reached.started = True  # from here the request costs work: a download, a check
    post = await _post_of(request)
    handle = reached.handle = await service.submit(post, request.requester, admission=admission)
    reached.submitted = True
    # Queued on workers, a deliver job posts the card, from whichever replica is alive
    # then; this one shows progress while it is.
    delivery = service.delivery if handle.delivered_elsewhere and not handle.done else None
    reached.queued = delivery is not None
    live = not handle.done and not request.unasked
    if live:
        await screen.open_progress(handle.check_id)
    if delivery is not None:  # a deliver job posts the card: tell it where
        target, platform = screen.delivery_target(post, request), request.requester.platform
        await delivery.expect(handle.check_id, platform, target)
    if live:
        await follow_progress(handle.events(), screen.show_progress, progress_interval_s)
    if reached.queued:
        if handle.cancelled:  # the requester pressed Cancel: no card comes
            raise asyncio.CancelledError
        return
    await _show_card(calls, request, screen, post, await handle.result())


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
    calls: StoreCalls, request: CheckRequest, screen: Screen, post: Post, outcome: Outcome
) -> None:
    """Show ``outcome``'s verdict card on ``screen``, unless the post was unasked and its
    verdict is not one an unasked post gets a card for."""
    if request.unasked and not await unasked_gets_card(
        outcome.report, request.min_confidence, request.react
    ):
        return
    requester = request.requester
    asker = calls.service.chats.user_hash(requester.platform, requester.user_id)
    card = await card_for(calls, outcome, card_target(post, asker))
    await screen.show_card(card)


async def _wait_turn(ticket: Ticket | None, screen: Screen) -> None:
    """Wait for the request's turn in its private chat's line, saying how many are
    ahead when any are."""
    if ticket is None:
        return
    if ticket.ahead:
        await screen.show_waiting(ticket.ahead)
    await ticket.ready()


async def _post_of(request: CheckRequest) -> Post:
    """The post ``request`` asks about, its text file read, its images downloaded (or
    its link fetched)."""
    text = request.text
    if request.read_text is not None:
        text = "\n\n".join(part for part in (text.strip(), await request.read_text()) if part)
    return await post_from_message(
        text,
        images=await request.download(),
        published=request.published,
        origin=request.origin,
        language=request.language,
        allow_private_urls=request.allow_private_urls,
    )


def card_target(post: Post, asker: str) -> dict[str, str]:
    """What a verdict card is made from besides the outcome, as plain JSON values: where
    the post came from and when, who asked (``asker``: the user's keyed hash, as the
    store keeps it, never the platform id) and the chat's language (the post's reply
    language). Each platform's deliver-job target holds it, so that a queued card is
    made as a live one is (see :func:`card_for`)."""
    return {
        "origin": post.origin,
        "published": post.published.isoformat() if post.published else "",
        "asker": asker,
        "language": post.language,
    }


async def card_for(calls: StoreCalls, outcome: Outcome, target: Mapping[str, Any]) -> VerdictCard:
    """The verdict card of ``outcome``, live or from a deliver job: ``target`` is
    :func:`card_target`'s (in a deliver job, the target recorded for it). The card says
    how many checks the asker has left today when few are; a target without its asker
    (recorded before it held one) gets the card without that line, and one without its
    language, English words."""
    published = str(target.get("published") or "")
    asker = str(target.get("asker") or "")
    return verdict_card(
        outcome,
        origin=str(target.get("origin") or ""),
        published=dt.date.fromisoformat(published) if published else None,
        checks_left=await _checks_left(calls, asker, outcome.check_id) if asker else None,
        words=words_for(str(target.get("language") or "")),
    )


async def _checks_left(calls: StoreCalls, asker: str, check_id: str) -> int | None:
    """How many more checks the user whose hash is ``asker`` may ask for today
    (``None``: unknown; the card is shown without it)."""
    service = calls.service
    try:
        return await off_loop(lambda: service.limits.left_today(asker, service.clock()))
    except Exception:  # a courtesy line: the card comes without it
        log.warning("could not count the checks left for check %s", check_id, exc_info=True)
        return None


async def _failed(request: CheckRequest, screen: Screen, exc: Exception, *, started: bool) -> None:
    """Say what went wrong, in one sentence; what failed inside goes to the log."""
    chat = log_chat(request.requester.platform, request.requester.chat_id)  # never the id
    if isinstance(exc, ZofiaError) and not started and request.on_refused is not None:
        request.on_refused()  # refused before it cost any work
    # Nobody asked an automatic check: a limit's refusal, or an image that cannot be
    # read, is no reason to speak in the group (it gets a card, a reaction or nothing).
    quiet = isinstance(exc, RateLimitedError) or (
        request.has_images and isinstance(exc, InvalidPostError)
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
