"""How a correction reaches a chat, in one place: a verdict a moderator changed, or a
recheck of the same text came to, reaches every chat that was shown its card, which is
edited, and told once.

1. A bot records each card it shows (:func:`record_card`); one that shows a verdict
   changed meanwhile is due at once.
2. A review (:func:`~.reviews.add_review`) or a recheck's report
   (:func:`~.finished.save_report`) marks due, in its transaction, the cards that show
   another verdict than the one now in force where they are
   (:meth:`storage.shown_cards.ShownCards.mark_due`); in the queued mode a ``correct``
   job is queued for each platform with cards due (:mod:`.queue.corrections`), in the
   local mode the bot's poll of the store finds them (:func:`correcting`).
3. :func:`correct` makes, for one check, each chat's :class:`~.records.ChatCorrection`
   (its cards as they now read, the change to tell, the votes) and hands it to the
   platform's sender, one chat after another, so that the platform's rate limiting
   paces them. A chat told is marked corrected (unless a newer change came meanwhile:
   that one is sent next); one whose sending failed is tried again after a backoff of
   :data:`FIRST_BACKOFF` doubling up to :data:`MAX_BACKOFF`, and given up
   :data:`GIVE_UP` after its card fell due; a sender that finds the chat gone for good
   raises :class:`~.records.ChatGoneError`, and that chat is given up at once while the
   others are still told. A chat's moderators' review reaches only that chat. Log lines
   name a chat by its keyed hash, never by its id.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

from storage.shown_cards import InForce
from storage.store import CheckStore

from .naming import ChatNamer
from .records import (
    CardPlace,
    CardState,
    ChatCorrection,
    ChatGoneError,
    QueueDue,
    SendCorrection,
    ShownCard,
)
from .rounds import every
from .shown import card_state

__all__ = [
    "BATCH",
    "FIRST_BACKOFF",
    "GIVE_UP",
    "MAX_BACKOFF",
    "POLL_S",
    "correct",
    "correcting",
    "due_corrections",
    "record_card",
]

log = logging.getLogger(__name__)

#: the wait before a failed correction is tried again, doubling with each failure
FIRST_BACKOFF = dt.timedelta(minutes=1)
MAX_BACKOFF = dt.timedelta(hours=2)
#: a correction still failing this long after its card fell due is given up
GIVE_UP = dt.timedelta(days=1)
#: how often a bot in the local mode looks for corrections due
POLL_S = 10.0
#: checks corrected per round of the poll (the rest wait for the next round)
BATCH = 20

#: runs a blocking store call off the event loop (the service's own threads)
OffLoop = Callable[..., Awaitable[Any]]


def record_card(store: CheckStore, check_id: str, place: CardPlace, queue_due: QueueDue) -> bool:
    """Record a card a bot showed, and make its correction due at once when it shows a
    verdict already changed, with its corrections queued as the mode queues them
    (blocking).

    Returns:
        Whether it was recorded (``False``: no such check).
    """
    with store.write():
        found = store.shown_cards.record(check_id, place)
        if found is not None and found[1]:
            queue_due({found[0]: [place.platform]})
    return found is not None


def due_corrections(store: CheckStore, original_id: str, platform: str) -> list[ChatCorrection]:
    """The chats of ``platform`` to tell that ``original_id``'s verdict changed there, in
    the order their cards were shown, each with the word in force in that chat and its
    cards as they now read (those with nothing left to show are left out); cards that
    show the word already are settled instead (a change undone before it was told).
    Blocking."""
    chats: dict[str, list[ShownCard]] = {}
    settled: list[ShownCard] = []
    words: dict[str, InForce] = {}
    for card in store.shown_cards.due(original_id, platform):
        if card.chat not in words:
            word = store.shown_cards.word_in_force(original_id, card.scope)
            if word is None:
                continue
            words[card.chat] = word
        if card.verdict == words[card.chat].verdict:
            settled.append(card)
        else:
            chats.setdefault(card.chat, []).append(card)
    found = []
    for chat, shown in chats.items():
        word = words[chat]
        # The cards become those of the check whose word is in force, with its votes: a
        # newer recheck's card, or each card's own (its buttons stay its own check's).
        states = [(card, _state_of(store, card, word.check_id, original_id)) for card in shown]
        readable = tuple((card, state) for card, state in states if state is not None)
        if not readable:  # nothing to show any more: nothing to say
            settled += shown
            continue
        said = ChatCorrection(
            platform,
            chat,
            readable,
            shown[-1].verdict,
            word.verdict,
            word.note,
            word.link,
            source=word.check_id,
            rechecked=word.check_id != original_id and not word.reviewed,
            everywhere=word.everywhere,
            votes=store.feedback.counts(word.check_id),
        )
        found.append(said)
    store.shown_cards.settled(settled)
    return found


def _state_of(store: CheckStore, card: ShownCard, source: str, original: str) -> CardState | None:
    """What ``card`` now reads as, in its chat: the newer recheck's card when its word is
    in force (``source``), but still of its own check."""
    state = card_state(store, card.check_id if source == original else source, seen_from=card.scope)
    if state is None or state.outcome.check_id == card.check_id:
        return state
    return replace(state, outcome=replace(state.outcome, check_id=card.check_id))


def failed(store: CheckStore, cards: list[ShownCard]) -> bool:
    """Correcting ``cards`` failed for a passing reason (a 429, a 5xx, the network): they
    are tried again after a backoff (:data:`FIRST_BACKOFF`, doubling up to
    :data:`MAX_BACKOFF`), and given up :data:`GIVE_UP` after they fell due (blocking).

    Returns:
        Whether none is left to try (each given up, or a newer change took it over).
    """
    if not cards:
        return True
    now = store.clock()
    with store.write():
        for card in cards:
            found = store.shown_cards.tries(card)
            if found is None:
                continue  # a newer change was marked: it starts its own tries
            tries, since = found[0] + 1, found[1] or now
            wait = min(FIRST_BACKOFF * 2 ** (tries - 1), MAX_BACKOFF)
            store.shown_cards.retry(card, tries, None if now - since >= GIVE_UP else now + wait)
    return store.shown_cards.due_among(cards) == 0


async def correct(
    store: CheckStore,
    off_loop: OffLoop,
    namer: ChatNamer,
    check_id: str,
    send: tuple[str, SendCorrection],
) -> bool:
    """Edit the cards of original check ``check_id`` on a platform and tell each chat
    once, one chat at a time, with ``send`` (the platform and its sender).

    Returns:
        Whether no chat is left to try again (each was told, or given up).
    """
    platform, sender = send
    left = False
    chats: list[ChatCorrection] = await off_loop(due_corrections, store, check_id, platform)
    for chat in chats:
        cards = [card for card, _ in chat.cards]
        where = namer.log_name(platform, chat.chat)  # its keyed hash, never its id
        try:
            await sender(chat)
        except ChatGoneError as exc:
            log.info("chat %s can never be told of check %s: %s", where, check_id, exc)
            await off_loop(store.shown_cards.gave_up, cards)
            continue
        except Exception as exc:
            log.warning("could not correct check %s in chat %s: %r", check_id, where, exc)
            left = not await off_loop(failed, store, cards) or left
            continue
        await off_loop(store.shown_cards.corrected, cards, chat.verdict)
    return not left


@contextlib.asynccontextmanager
async def correcting(
    store: CheckStore,
    off_loop: OffLoop,
    namer: ChatNamer,
    send: tuple[str, SendCorrection],
) -> AsyncIterator[None]:
    """Send a platform's corrections due while the block runs, looking every
    :data:`POLL_S` seconds, :data:`BATCH` checks a round (the local mode); the poll stops
    with it."""

    async def look() -> None:
        due: list[str] = await off_loop(store.shown_cards.due_checks, send[0], limit=BATCH)
        for check_id in due:
            await correct(store, off_loop, namer, check_id, send)

    async with every(lambda: POLL_S, look, "looking for corrections"):
        yield
