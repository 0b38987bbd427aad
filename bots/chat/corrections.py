"""Corrections, the same on every platform: a verdict a moderator changed, or a recheck
of the same text came to, reaches every chat that was shown its card, which is edited,
and told once.

A bot records each card it shows (:func:`record_shown`). A review that changes a
verdict, or a recheck that comes to another one, makes the cards that show another one
due (:mod:`bots.service.corrections`); for one check, :func:`correct_check` makes each
chat's :class:`Notice` (its cards as they now read, and one :func:`update_sentence`)
and hands it to the platform's sender, one chat after another, so the platform's own
rate limiting paces them. A chat told is marked corrected (unless a newer change came
meanwhile: that one is sent next); one whose sending failed is tried again after a
backoff of minutes to hours, and given up a day after its card fell due
(:mod:`storage.shown_cards`). A sender that finds the chat gone for good (the bot
removed or blocked, the chat deleted) raises :class:`ChatGoneError`: that chat is given
up at once, and the others are still told. A chat's moderators' review reaches only
that chat. Log lines name a chat by its keyed hash, never by its id.

In the local mode the bot finds due corrections by polling the store every
:data:`POLL_S` seconds while it runs (:func:`correcting`); in the queued mode a
``correct`` job brings them, queued by the review and again, for a chat whose send
failed, by a periodic look once its backoff is over (:mod:`bots.service.queue.corrections`).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace

from bots.render.card import VerdictCard, verdict_card
from bots.render.card_notes import SHORT_NAMES
from bots.render.words import ENGLISH, N_, Words, words_for
from bots.service.checks import CheckService
from bots.service.corrections import ChatCorrection, due_chats, record_card
from bots.service.queue.service import stored_outcome
from bots.service.records import Outcome
from storage.other_chats import as_seen_elsewhere
from storage.reviews import Scope
from storage.shown_cards import ShownCard
from storage.store import CheckStore

from .logs import log_chat
from .store_calls import StoreCalls, off_loop

__all__ = [
    "BATCH",
    "POLL_S",
    "ChatGoneError",
    "Notice",
    "SendCorrection",
    "correct_check",
    "correcting",
    "record_shown",
    "reviewed_card",
    "saved_sentence",
    "update_sentence",
    "verdict_word",
]

log = logging.getLogger(__name__)

#: how often a bot in the local mode looks for corrections due
POLL_S = 10.0
#: checks corrected per round of the poll (the rest wait for the next round)
BATCH = 20


@dataclass(frozen=True)
class Notice:
    """What one chat is sent: each of its cards as it now reads (to edit it in place),
    the sentence saying what changed, and the verdict's votes (the card's buttons)."""

    chat: str
    cards: tuple[tuple[ShownCard, VerdictCard], ...]
    sentence: str
    votes: tuple[int, int] = (0, 0)


#: a platform's sender: edit a chat's cards, then tell it once; raises when it could not
#: (:class:`ChatGoneError` when it never will)
SendCorrection = Callable[[Notice], Awaitable[None]]


class ChatGoneError(Exception):
    """The chat can never be told: the bot may no longer post there, or it is gone."""


def verdict_word(verdict: str, words: Words = ENGLISH) -> str:
    """A verdict in one word or two, as the card's headline starts ("Misleading"), in
    ``words`` (the names the card's review note uses)."""
    return words(SHORT_NAMES[verdict]) if verdict in SHORT_NAMES else verdict


_UPDATES = {
    # everywhere (the service's reviewers, or a recheck), with a note, without one
    True: (
        N_("Update: this post was changed from {before} to {after}: {note}"),
        N_("Update: this post was changed from {before} to {after}."),
    ),
    False: (
        N_("Update: this chat's moderators changed this post from {before} to {after}: {note}"),
        N_("Update: this chat's moderators changed this post from {before} to {after}."),
    ),
}


def update_sentence(
    shown: str,
    verdict: str,
    note: str = "",
    link: str = "",
    words: Words = ENGLISH,
    *,
    rechecked: bool = False,
    everywhere: bool = True,
) -> str:
    """ "Update: this post was changed from Unproven to False: <note>" (and the review's
    link, if any), in ``words`` (the chat's language); a chat's own moderators' review
    says so ("Update: this chat's moderators changed …"); ``rechecked`` (a recheck's
    verdict, no moderator's note): "…: it was checked again with new evidence." """
    before, after = verdict_word(shown, words), verdict_word(verdict, words)
    with_note, without = _UPDATES[everywhere]
    if rechecked and not note:
        said = words(
            "Update: this post was changed from {before} to {after}:"
            " it was checked again with new evidence.",
            before=before,
            after=after,
        )
    elif note:
        said = words(with_note, before=before, after=after, note=note)
    else:
        said = words(without, before=before, after=after)
    return f"{said} ({link})" if link else said


def saved_sentence(
    before: str, after: str, words: Words = ENGLISH, *, everywhere: bool = True
) -> str:
    """What a moderator is told once their review is stored, in ``words``: who is told
    (every chat shown the card, for the service's reviewers; this chat, for its own)."""
    if before == after:
        return words("Review saved: {verdict} is confirmed.", verdict=verdict_word(after, words))
    if not everywhere:
        return words(
            "Review saved: {before} → {after}, for this chat: its cards are updated.",
            before=verdict_word(before, words),
            after=verdict_word(after, words),
        )
    return words(
        "Review saved: {before} → {after}. Every chat shown this check's card is told.",
        before=verdict_word(before, words),
        after=verdict_word(after, words),
    )


def stored_card(
    store: CheckStore, check_id: str, *, seen_from: Scope | None = None
) -> VerdictCard | None:
    """The card of check ``check_id`` as it reads now, with a moderator's review in force,
    in the chat ``seen_from`` (by default its own: another chat is shown only what is
    shown across chats, :mod:`storage.other_chats`) (blocking); ``None`` once it has no
    report to show (purged, or not finished)."""
    outcome = stored_outcome(store, check_id)
    row = store.checks.get(check_id)
    if not isinstance(outcome, Outcome) or row is None:
        return None
    if seen_from is not None and (row.platform, row.chat) != seen_from:
        outcome = replace(outcome, report=as_seen_elsewhere(outcome.report))
    words = words_for(row.language)  # the chat's language, as the check was answered in
    return verdict_card(outcome, origin=row.origin, published=row.published, words=words)


async def reviewed_card(calls: StoreCalls, check_id: str) -> VerdictCard | None:
    """:func:`stored_card`, off the event loop."""
    return await off_loop(stored_card, calls.service.store, check_id)


async def record_shown(
    calls: StoreCalls,
    card: VerdictCard,
    platform: str,
    chat: str,
    message: str = "",
    *,
    private: bool = False,
    token: str = "",
    token_expires: dt.datetime | None = None,
) -> None:
    """Record where ``card`` was shown, so a correction can reach it; never raises (a
    card not recorded only misses a correction)."""
    try:
        await off_loop(
            record_card,
            calls.service.store,
            card.check_id,
            platform=platform,
            chat=chat,
            message=message,
            verdict=card.verdict,
            private=private,
            token=token,
            token_expires=token_expires,
            queued=calls.service.queued,
        )
    except Exception:
        log.warning("could not record the card of check %s", card.check_id, exc_info=True)


def _card_for(store: CheckStore, shown: ShownCard, newer: str | None) -> VerdictCard | None:
    """The card ``shown`` now reads as: a newer recheck's verdict and report when one is in
    force, but still the card of its own check (its buttons and follow-ups are of the check
    that chat asked, which it can still open)."""
    card = stored_card(store, newer or shown.check_id, seen_from=shown.scope)
    return None if card is None else replace(card, check_id=shown.check_id)


def _notices(
    store: CheckStore, platform: str, check_id: str
) -> list[tuple[ChatCorrection, Notice]]:
    """Each chat of ``platform`` due a correction of ``check_id``, with its notice."""
    found = []
    chats = due_chats(store, check_id, platform)
    # The cards become those of the check whose word is in force, with its votes: a
    # newer recheck's card, or each card's own.
    votes = store.feedback.counts(chats[0].source) if chats else (0, 0)
    for chat in chats:
        newer = chat.source if chat.source != check_id else None
        cards = [(shown, _card_for(store, shown, newer)) for shown in chat.cards]
        readable = tuple((shown, card) for shown, card in cards if card is not None)
        if not readable:  # nothing to show any more: nothing to say
            store.shown_cards.settled(list(chat.cards))
            continue
        # In the chat's language, as its newest card (the one the update answers) reads.
        words = readable[-1][1].words
        said = update_sentence(
            chat.shown,
            chat.verdict,
            chat.note,
            chat.link,
            words,
            rechecked=chat.rechecked,
            everywhere=chat.everywhere,
        )
        found.append((chat, Notice(chat.chat, readable, said, votes)))
    return found


async def correct_check(
    service: CheckService, platform: str, check_id: str, send: SendCorrection
) -> bool:
    """Edit the cards of original check ``check_id`` on ``platform`` and tell each chat
    once, one chat at a time.

    Returns:
        Whether no chat is left to try again (each was told, or given up).
    """
    store = service.store
    left = False
    for chat, notice in await off_loop(_notices, store, platform, check_id):
        cards = list(chat.cards)
        where = log_chat(platform, chat.chat)  # its keyed hash, never its id
        try:
            await send(notice)
        except ChatGoneError as exc:
            log.info("chat %s can never be told of check %s: %s", where, check_id, exc)
            await off_loop(store.shown_cards.gave_up, cards)
            continue
        except Exception as exc:
            log.warning("could not correct check %s in chat %s: %r", check_id, where, exc)
            left = not await off_loop(store.shown_cards.failed, cards) or left
            continue
        await off_loop(store.shown_cards.corrected, cards, chat.verdict)
    return not left


async def _poll(service: CheckService, platform: str, send: SendCorrection, every_s: float) -> None:
    """Look for corrections due every ``every_s`` seconds, :data:`BATCH` checks a round,
    until cancelled."""
    store = service.store
    while True:
        await asyncio.sleep(every_s)
        try:
            for check_id in await off_loop(store.shown_cards.due_checks, platform, limit=BATCH):
                await correct_check(service, platform, check_id, send)
        except Exception:  # the next round tries again
            log.exception("looking for corrections failed")


@contextlib.asynccontextmanager
async def correcting(
    service: CheckService, platform: str, send: SendCorrection, *, every_s: float | None = None
) -> AsyncIterator[None]:
    """Send ``platform``'s corrections due while the block runs (the local mode); the
    poll stops with it."""
    poll = asyncio.create_task(_poll(service, platform, send, every_s or POLL_S))
    try:
        yield
    finally:
        poll.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await poll
