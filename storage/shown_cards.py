"""``store.shown_cards``: where each verdict card was shown, so that a correction reaches it.

A bot records every card it shows: the check it answered (an original or a repeat),
the check whose verdict it shows, the platform's raw chat and message ids, and the
verdict on it. When the verdict in force changes (:meth:`ShownCards.word_in_force`: a
moderator's review, or a recheck of the same text that came to another outcome), the
cards that show another verdict become *due*: their chats are to get the card edited
and one short update (:mod:`bots.service.corrections`). The verdict in force is read where a
card is: a review by a chat's moderators changes only that chat's cards (its scope is
the card's check's platform and keyed chat), one by the service's reviewers changes all.

A card is corrected once per change. Each change bumps the card's ``due_gen``, and a
correction is marked done only on the generation it was read at (compare and set): the
sends of one change never clear the next. A send that failed is tried again when the
service says (:meth:`ShownCards.retry`: its backoff and when it gives up are the
service's, :mod:`bots.service.corrections`); a permanent refusal (the bot was removed or
blocked, the chat is gone) gives up at once (:meth:`ShownCards.gave_up`).

The raw ids are what the bot needs to edit a message. The chat's id (a private chat's is
its user's) and a Discord card's interaction token are sealed (:mod:`storage.sealing`:
encrypted under a key derived from the store's secret) and opened only to send; a card
is found by its chat's keyed hash (``chat_hash``). The rows go with their check's
content at the retention purge (:mod:`storage.retention`), so a chat whose record was
purged is told nothing. A Discord card's token is valid 15 minutes;
:meth:`ShownCards.forget_tokens` blanks expired ones.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass
from typing import Any

from .keys import storable_text
from .locked import LockedDatabase
from .reviews import Scope
from .rows import from_iso, to_iso
from .sealing import Sealer

__all__ = ["CardPlace", "InForce", "ShownCard", "ShownCards"]
# A card with its scope (its check's platform and keyed chat).
_CARDS = "SELECT s.*, c.chat AS chat_key FROM shown_cards s JOIN checks c ON c.id = s.check_id"

# The newest recheck (an original the user forced) of check ?'s text, asked after it,
# with its report: the newer word on that text. A purged check's key is blank.
_NEWER_RECHECK = """
    SELECT r.id FROM checks x JOIN checks r ON r.text_hash = x.text_hash
    JOIN reports p ON p.check_id = r.id
    WHERE x.id = ? AND x.text_hash != '' AND r.forced = 1 AND r.repeat_of IS NULL
    AND (r.created_at > x.created_at OR (r.created_at = x.created_at AND r.rowid > x.rowid))
    ORDER BY r.created_at DESC, r.rowid DESC LIMIT 1
"""
# The other original checks of check ?'s text with cards shown.
_SHOWN_OF_TEXT = """
    SELECT DISTINCT s.original_id FROM checks c JOIN checks x ON x.text_hash = c.text_hash
    JOIN shown_cards s ON s.original_id = x.id
    WHERE c.id = ? AND c.text_hash != '' AND x.id != c.id ORDER BY s.original_id
"""


@dataclass(frozen=True, slots=True)
class InForce:
    """The verdict an original check's cards are to show, and whose word it is:
    ``check_id`` is the check itself or the newer recheck of its text that decides it;
    ``reviewed``: a moderator's review of that check gave it (else its machine did), and
    ``note`` and ``link`` are that review's (read with its verdict, in one query)."""

    check_id: str
    verdict: str
    reviewed: bool
    note: str = ""
    link: str = ""
    everywhere: bool = True  # a review by the service's reviewers (or none), not a chat's


@dataclass(frozen=True, slots=True)
class CardPlace:
    """Where a bot showed a card, with the platform's raw ids, and what it shows.

    Args:
        platform: the bot's platform.
        chat: the raw chat id (a Discord channel; sealed at rest).
        message: the message that shows it (empty for a Discord interaction's response).
        verdict: the verdict it shows.
        private: only its asker sees it (a Discord ephemeral response).
        token: a Discord interaction's token, which edits it until ``token_expires``.
    """

    platform: str
    chat: str
    message: str
    verdict: str
    private: bool = False
    token: str = ""
    token_expires: dt.datetime | None = None


@dataclass(frozen=True, slots=True)
class ShownCard:
    """One card as recorded: where it is (raw ids, opened; and its chat keyed as its
    check has it), what it shows, how to edit it, and the generation of its due mark."""

    id: str
    check_id: str
    original_id: str
    platform: str
    chat: str
    message: str
    private: bool
    token: str
    token_expires: dt.datetime | None
    verdict: str
    chat_key: str = ""
    due_gen: int = 0

    @property
    def scope(self) -> Scope:
        """Where the card is, as reviews name it: its platform and keyed chat."""
        return (self.platform, self.chat_key)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ShownCard:
        fields = {name: row[name] for name in cls.__slots__ if name in row}
        fields["private"] = bool(row["private"])
        fields["token_expires"] = from_iso(row["token_expires"])
        return cls(**fields)


class ShownCards:
    """The ``shown_cards`` table of a store.

    Args:
        db: the store's database, with its lock and clock.
        sealer: seals the raw chat ids and tokens, and keys the chats.
    """

    def __init__(self, db: LockedDatabase, sealer: Sealer) -> None:
        self.db = db
        self.sealer = sealer

    def word_in_force(self, original_id: str, scope: Scope | None = None) -> InForce | None:
        """The verdict an original check's cards are to show now where ``scope`` looks
        (a card's chat; ``None``: every chat's view); the one rule of it: the latest review
        of the check that applies there; else, once a recheck of the same text (a check
        its user ``forced``) asked after it has finished, the newest one's word (its latest
        review there, else its machine's verdict); else the check's own machine verdict.
        ``None`` without a report (in the caller's transaction, if any)."""
        reviewed = self._reviewed(original_id, scope)
        if reviewed is not None:
            return reviewed
        newer = self.db.execute(_NEWER_RECHECK, [original_id]).fetchone()
        if newer is None:
            return self._machine(original_id)
        return self._reviewed(str(newer[0]), scope) or self._machine(str(newer[0]))

    def in_force(self, original_id: str, scope: Scope | None = None) -> str | None:
        """The verdict of :meth:`word_in_force`, or ``None``."""
        word = self.word_in_force(original_id, scope)
        return None if word is None else word.verdict

    def _reviewed(self, check_id: str, scope: Scope | None) -> InForce | None:
        where, params = "chat = ''", [check_id]
        if scope is not None:
            where = "(chat = '' OR (platform = ? AND chat = ?))"
            params += list(scope)
        found = self.db.execute(
            f"SELECT to_verdict, note, link, chat FROM reviews WHERE check_id = ? AND {where}"
            " ORDER BY created_at DESC, rowid DESC LIMIT 1",
            params,
        ).fetchone()
        if found is None:
            return None
        verdict, note, link, chat = (str(value) for value in found)
        return InForce(check_id, verdict, reviewed=True, note=note, link=link, everywhere=not chat)

    def _machine(self, check_id: str) -> InForce | None:
        found = self.db.execute("SELECT verdict FROM reports WHERE check_id = ?", [check_id])
        row = found.fetchone()
        return None if row is None else InForce(check_id, str(row[0]), reviewed=False)

    def record(self, check_id: str, place: CardPlace) -> tuple[str, bool] | None:
        """Record that check ``check_id``'s card is at ``place`` (the same place again: its
        row is updated). It is due at once when the verdict in force is another than the
        one it shows (a review landed while it was on its way).

        Returns:
            ``(original id, due)``, or ``None`` for an unknown check (nothing recorded).
        """
        with self.db.write():
            found = self.db.execute(
                "SELECT coalesce(repeat_of, id), platform, chat FROM checks WHERE id = ?",
                [check_id],
            ).fetchone()
            if found is None:
                return None
            original = str(found[0])
            now = self.in_force(original, (str(found[1]), str(found[2])))
            due = now is not None and now != place.verdict
            platform, chat = storable_text(place.platform), storable_text(place.chat)
            row: dict[str, Any] = {
                "check_id": check_id,
                "original_id": original,
                "platform": platform,
                "chat": self.sealer.seal(chat),
                "chat_hash": self.sealer.chat_key(platform, chat),
                "message": storable_text(place.message),
                "private": int(place.private),
                "token": self.sealer.seal(storable_text(place.token)),
                "token_expires": None
                if place.token_expires is None
                else to_iso(place.token_expires),
                "verdict": place.verdict,
                "due": int(due),
                "tries": 0,
                "due_since": self.db.now() if due else None,
                "next_try_at": None,
                "created_at": self.db.now(),
            }
            known = self.db.execute(
                "SELECT id FROM shown_cards WHERE check_id = ? AND platform = ?"
                " AND chat_hash = ? AND message = ?",
                [check_id, platform, row["chat_hash"], row["message"]],
            ).fetchone()
            row["id"] = known[0] if known is not None else secrets.token_urlsafe(12)
            self.db.table("shown_cards").upsert(row, pk=("id",))
        return original, due

    def mark_due(self, check_id: str, scope: Scope | None = None) -> dict[str, list[str]]:
        """After a review of original ``check_id`` (``scope``: the chat a chat's review
        applies to; ``None``: every chat), or its report as a recheck (in that
        transaction): of its own cards and those of the other checks of its text whose
        word in force it now is (:meth:`word_in_force`), the cards showing another verdict
        than the one in force in their chat are due, the others not; each card marked
        gets a new generation.

        Returns:
            The platforms with cards due, in name order, by original check.
        """
        with self.db.write():
            found = self.db.execute(_SHOWN_OF_TEXT, [check_id]).fetchall()
            decided = [check_id]
            for other in (str(row[0]) for row in found):
                word = self.word_in_force(other)
                if word is not None and word.check_id == check_id:
                    decided.append(other)
            due = {original: self._mark_due(original, scope) for original in decided}
        return {original: platforms for original, platforms in due.items() if platforms}

    def _mark_due(self, original_id: str, scope: Scope | None) -> list[str]:
        """:meth:`mark_due` for one original check's cards in each of their chats (those
        of ``scope`` only, when given): its platforms with cards due. Inside the caller's
        write."""
        places = self.db.execute(
            "SELECT DISTINCT c.platform, c.chat FROM shown_cards s JOIN checks c"
            " ON c.id = s.check_id WHERE s.original_id = ?",
            [original_id],
        ).fetchall()
        now = self.db.now()
        for platform, chat in places:
            if scope is not None and (str(platform), str(chat)) != scope:
                continue
            word = self.word_in_force(original_id, (str(platform), str(chat)))
            if word is None:
                continue
            self.db.execute(
                "UPDATE shown_cards SET due = CASE WHEN verdict != ? THEN 1 ELSE 0 END,"
                " due_gen = due_gen + 1, tries = 0, next_try_at = NULL,"
                " due_since = CASE WHEN verdict != ? THEN ? END"
                " WHERE original_id = ? AND check_id IN"
                " (SELECT id FROM checks WHERE platform = ? AND chat = ?)",
                [word.verdict, word.verdict, now, original_id, platform, chat],
            )
        found = self.db.execute(
            "SELECT DISTINCT platform FROM shown_cards WHERE original_id = ? AND due = 1"
            " ORDER BY platform",
            [original_id],
        ).fetchall()
        return [str(row[0]) for row in found]

    def shown_in(self, check_id: str, platform: str, chat: str) -> bool:
        """Whether a card of check ``check_id`` was recorded as shown in ``chat`` of
        ``platform`` (the platform's raw chat id: a Discord channel)."""
        found = self.db.first(
            "SELECT 1 FROM shown_cards WHERE check_id = ? AND platform = ? AND chat_hash = ?",
            [check_id, platform, self.sealer.chat_key(platform, storable_text(chat))],
        )
        return found is not None

    def due_checks(self, platform: str, *, limit: int) -> list[str]:
        """Up to ``limit`` original checks with cards due on ``platform`` and not waiting
        for a retry."""
        found = self.db.rows(
            "SELECT DISTINCT original_id FROM shown_cards WHERE platform = ? AND due = 1"
            " AND (next_try_at IS NULL OR next_try_at <= ?) ORDER BY original_id LIMIT ?",
            [platform, self.db.now(), limit],
        )
        return [str(row[0]) for row in found]

    def due(self, original_id: str, platform: str) -> list[ShownCard]:
        """The cards of ``original_id`` due on ``platform`` and not waiting for a retry,
        oldest first, with their chats' scope and the generation of their due mark."""
        rows = self.db.dicts(
            f"{_CARDS} WHERE s.original_id = ? AND s.platform = ? AND s.due = 1"
            " AND (s.next_try_at IS NULL OR s.next_try_at <= ?) ORDER BY s.created_at, s.rowid",
            [original_id, platform, self.db.now()],
        )
        for row in rows:  # opened to send to them, never written back
            row["chat"] = self.sealer.open(row["chat"])
            row["token"] = self.sealer.open(row["token"])
        return [ShownCard.from_row(row) for row in rows]

    def corrected(self, cards: list[ShownCard], verdict: str) -> None:
        """These cards now show ``verdict``; nothing is due there any more unless a newer
        change was marked since they were read (their generation moved on)."""
        with self.db.write():
            for card in cards:
                self.db.execute(
                    "UPDATE shown_cards SET verdict = ?, corrected_at = ? WHERE id = ?",
                    [verdict, self.db.now(), card.id],
                )
                self.db.execute(
                    "UPDATE shown_cards SET due = 0, tries = 0, next_try_at = NULL,"
                    " due_since = NULL WHERE id = ? AND due_gen = ?",
                    [card.id, card.due_gen],
                )

    def settled(self, cards: list[ShownCard]) -> None:
        """These cards show the verdict in force already (a change was undone)."""
        with self.db.write():
            for card in cards:
                self.db.execute(
                    "UPDATE shown_cards SET due = 0 WHERE id = ? AND due_gen = ?",
                    [card.id, card.due_gen],
                )

    def tries(self, card: ShownCard) -> tuple[int, dt.datetime | None] | None:
        """How many sends of ``card``'s correction failed, and since when it is due;
        ``None`` once a newer change was marked (it starts its own tries)."""
        found = self.db.execute(
            "SELECT tries, due_since FROM shown_cards WHERE id = ? AND due_gen = ?",
            [card.id, card.due_gen],
        ).fetchone()
        return None if found is None else (int(found[0]), from_iso(found[1]))

    def retry(self, card: ShownCard, tries: int, at: dt.datetime | None) -> None:
        """``card``'s correction failed ``tries`` times: try it again at ``at``, or never
        (``None``: given up)."""
        with self.db.write():
            self.db.execute(
                "UPDATE shown_cards SET tries = ?, next_try_at = ?, due = ? WHERE id = ?",
                [tries, None if at is None else to_iso(at), int(at is not None), card.id],
            )

    def due_among(self, cards: list[ShownCard]) -> int:
        """How many of ``cards`` are still due."""
        marks = ", ".join("?" for _ in cards)
        (left,) = self.db.one(
            f"SELECT count(*) FROM shown_cards WHERE due = 1 AND id IN ({marks})",
            [c.id for c in cards],
        )
        return int(left)

    def gave_up(self, cards: list[ShownCard]) -> None:
        """These cards can never be corrected (the bot was removed or blocked, the chat is
        gone): nothing is due there any more, unless a newer change was marked since they
        were read. Their verdict stays the one they show."""
        with self.db.write():
            for card in cards:
                self.db.execute(
                    "UPDATE shown_cards SET due = 0, tries = tries + 1, next_try_at = NULL"
                    " WHERE id = ? AND due_gen = ?",
                    [card.id, card.due_gen],
                )

    def forget_tokens(self, now: dt.datetime) -> int:
        """Blank the tokens that expired before ``now`` (they can edit nothing any more)."""
        with self.db.write():
            cursor = self.db.execute(
                "UPDATE shown_cards SET token = '', token_expires = NULL"
                " WHERE token_expires IS NOT NULL AND token_expires < ?",
                [to_iso(now)],
            )
        return int(cursor.rowcount)
