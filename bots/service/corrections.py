"""Reviews beyond the audit trail: who may review, and corrections that reach the chats.

- :class:`Reviewers`: the reviewers named in ``[service] reviewers`` (``"telegram:123"``),
  kept only as HMACs of the platform and user id, as every id is.
- :func:`review_check`: a review (:mod:`storage.reviews`) and, in the same transaction,
  the cards it makes due (:mod:`storage.shown_cards`); in the queued mode a ``correct``
  job is queued for each platform with cards due (:mod:`bots.service.queue.corrections`).
  ``zofia review`` and the bots both come here.
- :func:`save_report`: a finished check's report; a recheck (``zofia check --recheck``)
  that came to another verdict makes due, in the same transaction, the cards of the
  earlier checks of its text, as a review does (the verdict in force:
  :meth:`storage.shown_cards.ShownCards.word_in_force`). Both engine runs end here.
- :func:`record_card`: a card a bot showed; one that shows a verdict a review changed
  meanwhile is due at once.
- :func:`due_chats`: what a bot sends for one check: each chat's cards to edit and the
  change to tell it once, with the note of the review in force, or the recheck's word.

In the local mode (SQLite) the running bot finds due cards by polling the store
(``bots.chat.corrections``): a review may come from ``zofia review`` in another process.
The mode is not asked of the database here: each caller passes ``queued``, as the
composition root decided it (``Settings.queued``; a service's is whether it was given a
:class:`~bots.service.card_delivery.CardDelivery`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from storage.keys import hash_user
from storage.reviews import Review
from storage.shown_cards import InForce, ShownCard
from storage.store import CheckStore
from zofia_engine.report import Report

from .queue.corrections import queue_corrections

__all__ = [
    "ChatCorrection",
    "Reviewers",
    "due_chats",
    "record_card",
    "review_check",
    "save_report",
]


class Reviewers:
    """The reviewers the settings name, each ``"platform:user id"``, kept as HMACs.

    Args:
        named: the ``[service] reviewers`` entries.
        secret: the key of the stored identities.

    Attributes:
        hashes: the reviewers' HMACs (:func:`~storage.keys.hash_user`), the only form in
            which the process keeps them: never the ids themselves.
    """

    def __init__(self, named: Iterable[str], secret: bytes) -> None:
        self._secret = secret
        self.hashes = frozenset(hash_user(secret, *entry.strip().split(":", 1)) for entry in named)

    def named(self, platform: str, user_id: str) -> bool:
        """Whether the settings name this user of ``platform`` a reviewer."""
        return hash_user(self._secret, platform, user_id) in self.hashes


@dataclass(frozen=True)
class ChatCorrection:
    """One chat to tell of one changed verdict: edit ``cards``, then say it once.

    ``shown`` is the verdict the chat was shown (its newest card's), ``verdict`` the one
    in force; ``note`` and ``link`` are the review's. ``source`` is the check whose word
    it is (the check itself, or a newer recheck of its text: its card is the one to
    show); ``rechecked``: that recheck's machine verdict, no moderator's.
    """

    platform: str
    chat: str
    cards: tuple[ShownCard, ...]
    shown: str
    verdict: str
    note: str
    link: str
    source: str
    rechecked: bool
    everywhere: bool = True  # the service's reviewers (or a recheck); else the chat's own


def _queue(store: CheckStore, due: dict[str, list[str]], *, queued: bool) -> None:
    """In the queued mode, the ``correct`` jobs of each original check with cards
    ``due`` (in the caller's transaction); in the local mode the bot's poll finds them."""
    if due and queued:
        for original_id, platforms in due.items():
            queue_corrections(store.postgres(), original_id, platforms)


def review_check(
    store: CheckStore,
    check_id: str,
    *,
    reviewer: str,
    platform: str,
    verdict: str,
    note: str = "",
    link: str = "",
    chat: str = "",
    queued: bool,
) -> Review:
    """Add a review (:meth:`storage.reviews.Reviews.add`, same arguments: ``chat`` the
    keyed chat it applies to, ``""`` for every chat) and make due the cards it changes
    (only that chat's, for a chat's review), in one write transaction (blocking); in the
    ``queued`` mode, with their ``correct`` jobs."""
    with store.write():
        review = store.reviews.add(
            check_id,
            reviewer=reviewer,
            platform=platform,
            verdict=verdict,
            note=note,
            link=link,
            chat=chat,
        )
        scope = None if review.everywhere else (review.platform, review.chat)
        _queue(store, store.shown_cards.mark_due(review.check_id, scope), queued=queued)
    return review


def save_report(
    store: CheckStore,
    check_id: str,
    report: Report,
    *,
    vector: npt.NDArray[np.float32] | None = None,
    queued: bool,
) -> None:
    """Store a finished check's report (:meth:`storage.reports.Reports.save`, same
    arguments and errors) and, for a recheck, make due the cards of the earlier checks
    of its text that now show another verdict, in one write transaction (blocking); in
    the ``queued`` mode, with their ``correct`` jobs."""
    with store.write():
        store.reports.save(check_id, report, vector=vector)
        row = store.checks.get(check_id)
        if row is not None and row.forced:
            _queue(store, store.shown_cards.mark_due(check_id), queued=queued)


def record_card(
    store: CheckStore,
    check_id: str,
    *,
    platform: str,
    chat: str,
    message: str,
    verdict: str,
    private: bool = False,
    token: str = "",
    token_expires: dt.datetime | None = None,
    queued: bool,
) -> bool:
    """Record a card a bot showed (:meth:`storage.shown_cards.ShownCards.record`), and
    make its correction due at once when it shows a verdict already changed, with its
    ``correct`` job in the ``queued`` mode (blocking).

    Returns:
        Whether it was recorded (``False``: no such check).
    """
    with store.write():
        found = store.shown_cards.record(
            check_id,
            platform=platform,
            chat=chat,
            message=message,
            verdict=verdict,
            private=private,
            token=token,
            token_expires=token_expires,
        )
        if found is not None and found[1]:
            _queue(store, {found[0]: [platform]}, queued=queued)
    return found is not None


def due_chats(store: CheckStore, original_id: str, platform: str) -> list[ChatCorrection]:
    """The chats of ``platform`` to tell that ``original_id``'s verdict changed there, in
    the order their cards were shown, each with the word in force in that chat (a review
    by its own moderators, or by the service's reviewers); cards that show it already are
    settled instead (a change undone before it was told). Blocking."""
    cards = store.shown_cards.due(original_id, platform)
    chats: dict[str, list[ShownCard]] = {}
    settled: list[ShownCard] = []
    words: dict[str, InForce] = {}
    for card in cards:
        if card.chat not in words:
            word = store.shown_cards.word_in_force(original_id, card.scope)
            if word is None:
                continue
            words[card.chat] = word
        if card.verdict == words[card.chat].verdict:
            settled.append(card)
        else:
            chats.setdefault(card.chat, []).append(card)
    store.shown_cards.settled(settled)
    return [
        ChatCorrection(
            platform,
            chat,
            tuple(shown),
            shown[-1].verdict,
            words[chat].verdict,
            words[chat].note,
            words[chat].link,
            source=words[chat].check_id,
            rechecked=words[chat].check_id != original_id and not words[chat].reviewed,
            everywhere=words[chat].everywhere,
        )
        for chat, shown in chats.items()
    ]
