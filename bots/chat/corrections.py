"""Corrections, as every chat platform says them: a verdict a moderator changed, or a
recheck of the same text came to, reaches every chat that was shown its card, which is
edited, and told once.

How a correction reaches a chat is the service's (:mod:`bots.service.corrections`: the
cards recorded, made due, and each chat's :class:`~bots.service.records.ChatCorrection`
handed to a sender, retried or given up). Here is what a chat is shown: each of its cards
as it now reads and the one sentence saying what changed (:class:`Notice`,
:func:`notice_of`), in the chat's language; each platform's sender posts it
(:func:`sender`). A bot records where each card it shows is
(:meth:`~bots.service.checks.CheckService.record_card`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bots.render.card import VerdictCard, verdict_card
from bots.render.card_notes import SHORT_NAMES
from bots.render.words import ENGLISH, N_, Words, words_for
from bots.service.records import CardState, ChatCorrection, Outcome, SendCorrection, ShownCard

__all__ = [
    "Notice",
    "SendNotice",
    "card_of",
    "notice_of",
    "saved_sentence",
    "sender",
    "update_sentence",
    "verdict_word",
]


@dataclass(frozen=True)
class Notice:
    """What one chat is sent: each of its cards as it now reads (to edit it in place),
    the sentence saying what changed, and the verdict's votes (the card's buttons)."""

    chat: str
    cards: tuple[tuple[ShownCard, VerdictCard], ...]
    sentence: str
    votes: tuple[int, int] = (0, 0)


#: a platform's sender: edit a chat's cards, then tell it once; raises when it could not
#: (:class:`~bots.service.records.ChatGoneError` when it never will)
SendNotice = Callable[[Notice], Awaitable[None]]


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


def update_sentence(change: ChatCorrection, words: Words = ENGLISH) -> str:
    """ "Update: this post was changed from Unproven to False: <note>" (and the review's
    link, if any), in ``words`` (the chat's language); a chat's own moderators' review
    says so ("Update: this chat's moderators changed …"); a recheck's verdict, with no
    moderator's note: "…: it was checked again with new evidence." """
    before, after = verdict_word(change.shown, words), verdict_word(change.verdict, words)
    with_note, without = _UPDATES[change.everywhere]
    if change.rechecked and not change.note:
        said = words(
            "Update: this post was changed from {before} to {after}:"
            " it was checked again with new evidence.",
            before=before,
            after=after,
        )
    elif change.note:
        said = words(with_note, before=before, after=after, note=change.note)
    else:
        said = words(without, before=before, after=after)
    return f"{said} ({change.link})" if change.link else said


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


def card_of(state: CardState) -> VerdictCard | None:
    """The verdict card ``state`` shows, in its chat's language; ``None`` for a check
    that failed (it has no card)."""
    if not isinstance(state.outcome, Outcome):
        return None
    words = words_for(state.language)  # the chat's language, as the check was answered in
    return verdict_card(state.outcome, origin=state.origin, published=state.published, words=words)


def notice_of(change: ChatCorrection) -> Notice:
    """What a chat is sent of ``change``: its cards as they now read, and the sentence, in
    the chat's language as its newest card reads."""
    cards = tuple((shown, card) for shown, state in change.cards if (card := card_of(state)))
    words = cards[-1][1].words if cards else ENGLISH
    return Notice(change.chat, cards, update_sentence(change, words), change.votes)


def sender(send: SendNotice) -> SendCorrection:
    """The service's sender of corrections for a platform that posts :class:`Notice` s."""

    async def send_correction(change: ChatCorrection) -> None:
        await send(notice_of(change))

    return send_correction
