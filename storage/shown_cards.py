"""``store.shown_cards``: where each verdict card was shown, so that a correction reaches it.

A bot records every card it shows: the check it answered (an original or a repeat),
the check whose verdict it shows, the platform's raw chat and message ids, and the
verdict on it. When the verdict in force changes (:meth:`ShownCards.word_in_force`: a
moderator's review, or a recheck of the same text that came to another outcome), the
cards that show another verdict become *due*: their chats are to get the card edited
and one short update (:mod:`storage.corrections`). A card is corrected once per change;
a chat whose sending keeps failing is given up after :data:`MAX_TRIES`.

The raw ids are what the bot needs to edit a message; the rows go with their check's
content at the retention purge (:mod:`storage.retention`), so a chat whose record was
purged is told nothing. A Discord card keeps the interaction token that lets the bot
edit it, valid 15 minutes; :meth:`ShownCards.forget_tokens` blanks expired ones.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass
from typing import Any

from .keys import storable_text
from .locked import LockedDatabase
from .rows import from_iso, to_iso

__all__ = ["MAX_TRIES", "InForce", "ShownCard", "ShownCards"]

#: times a chat's correction is tried before it is given up
MAX_TRIES = 5

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


@dataclass(frozen=True, slots=True)
class ShownCard:
    """One card as recorded: where it is (raw ids), what it shows, and how to edit it."""

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
    """

    def __init__(self, db: LockedDatabase) -> None:
        self.db = db

    def word_in_force(self, original_id: str) -> InForce | None:
        """The verdict an original check's cards are to show now; the one rule of it: a
        moderator's latest review of the check; else, once a recheck of the same text (a
        check its user ``forced``) asked after it has finished, the newest one's word
        (its latest review, else its machine's verdict); else the check's own machine
        verdict. ``None`` without a report (in the caller's transaction, if any)."""
        reviewed = self._reviewed(original_id)
        if reviewed is not None:
            return reviewed
        newer = self.db.execute(_NEWER_RECHECK, [original_id]).fetchone()
        if newer is None:
            return self._machine(original_id)
        return self._reviewed(str(newer[0])) or self._machine(str(newer[0]))

    def in_force(self, original_id: str) -> str | None:
        """The verdict of :meth:`word_in_force`, or ``None``."""
        word = self.word_in_force(original_id)
        return None if word is None else word.verdict

    def _reviewed(self, check_id: str) -> InForce | None:
        found = self.db.execute(
            "SELECT to_verdict, note, link FROM reviews WHERE check_id = ?"
            " ORDER BY created_at DESC, rowid DESC LIMIT 1",
            [check_id],
        ).fetchone()
        if found is None:
            return None
        verdict, note, link = (str(value) for value in found)
        return InForce(check_id, verdict, reviewed=True, note=note, link=link)

    def _machine(self, check_id: str) -> InForce | None:
        found = self.db.execute("SELECT verdict FROM reports WHERE check_id = ?", [check_id])
        row = found.fetchone()
        return None if row is None else InForce(check_id, str(row[0]), reviewed=False)

    def record(
        self,
        check_id: str,
        *,
        platform: str,
        chat: str,
        message: str,
        verdict: str,
        private: bool = False,
        token: str = "",
        token_expires: dt.datetime | None = None,
    ) -> tuple[str, bool] | None:
        """Record that check ``check_id``'s card showing ``verdict`` is at ``chat`` /
        ``message`` (the same place again: its row is updated). It is due at once when
        the verdict in force is another (a review landed while it was on its way).

        Returns:
            ``(original id, due)``, or ``None`` for an unknown check (nothing recorded).
        """
        with self.db.write():
            found = self.db.execute(
                "SELECT coalesce(repeat_of, id) FROM checks WHERE id = ?", [check_id]
            ).fetchone()
            if found is None:
                return None
            original = str(found[0])
            now = self.in_force(original)
            due = now is not None and now != verdict
            row: dict[str, Any] = {
                "check_id": check_id,
                "original_id": original,
                "platform": storable_text(platform),
                "chat": storable_text(chat),
                "message": storable_text(message),
                "private": int(private),
                "token": storable_text(token),
                "token_expires": None if token_expires is None else to_iso(token_expires),
                "verdict": verdict,
                "due": int(due),
                "tries": 0,
                "created_at": self.db.now(),
            }
            place = [check_id, row["platform"], row["chat"], row["message"]]
            known = self.db.execute(
                "SELECT id FROM shown_cards WHERE check_id = ? AND platform = ? AND chat = ?"
                " AND message = ?",
                place,
            ).fetchone()
            row["id"] = known[0] if known is not None else secrets.token_urlsafe(12)
            self.db.table("shown_cards").upsert(row, pk=("id",))
        return original, due

    def mark_due(self, check_id: str) -> dict[str, list[str]]:
        """After a review of original ``check_id``, or its report as a recheck (in that
        transaction): of its own cards and those of the other checks of its text whose
        word in force it now is (:meth:`word_in_force`), the cards showing another
        verdict than the one in force are due, the others not.

        Returns:
            The platforms with cards due, in name order, by original check.
        """
        with self.db.write():
            found = self.db.execute(_SHOWN_OF_TEXT, [check_id]).fetchall()
            decided = {check_id: self.word_in_force(check_id)}
            for other in (str(row[0]) for row in found):
                word = self.word_in_force(other)
                if word is not None and word.check_id == check_id:
                    decided[other] = word
            due = {
                original: self._mark_due(original, word.verdict)
                for original, word in decided.items()
                if word is not None
            }
        return {original: platforms for original, platforms in due.items() if platforms}

    def _mark_due(self, original_id: str, now: str) -> list[str]:
        """:meth:`mark_due` for one original check's cards, ``now`` the verdict in force
        (read once by the caller): its platforms with cards due. Inside the caller's write."""
        self.db.execute(
            "UPDATE shown_cards SET due = CASE WHEN verdict != ? THEN 1 ELSE 0 END,"
            " tries = 0 WHERE original_id = ?",
            [now, original_id],
        )
        found = self.db.execute(
            "SELECT DISTINCT platform FROM shown_cards WHERE original_id = ? AND due = 1"
            " ORDER BY platform",
            [original_id],
        ).fetchall()
        return [str(row[0]) for row in found]

    def due_checks(self, platform: str, *, limit: int) -> list[str]:
        """Up to ``limit`` original checks with cards due on ``platform``."""
        found = self.db.rows(
            "SELECT DISTINCT original_id FROM shown_cards WHERE platform = ? AND due = 1"
            " ORDER BY original_id LIMIT ?",
            [platform, limit],
        )
        return [str(row[0]) for row in found]

    def due(self, original_id: str, platform: str) -> list[ShownCard]:
        """The cards of ``original_id`` due on ``platform``, oldest first."""
        rows = self.db.dicts(
            "SELECT * FROM shown_cards WHERE original_id = ? AND platform = ? AND due = 1"
            " ORDER BY created_at, rowid",
            [original_id, platform],
        )
        return [ShownCard.from_row(row) for row in rows]

    def corrected(self, ids: list[str], verdict: str) -> None:
        """These cards now show ``verdict``: nothing is due there any more."""
        self._update(
            "UPDATE shown_cards SET verdict = ?, due = 0, tries = 0, corrected_at = ?"
            " WHERE id IN ({ids})",
            [verdict, self.db.now()],
            ids,
        )

    def settled(self, ids: list[str]) -> None:
        """These cards show the verdict in force already (a change was undone)."""
        self._update("UPDATE shown_cards SET due = 0 WHERE id IN ({ids})", [], ids)

    def failed(self, ids: list[str]) -> bool:
        """Correcting these cards failed once more; after :data:`MAX_TRIES` they are given
        up (no longer due).

        Returns:
            Whether they are given up.
        """
        if not ids:
            return True
        self._update(
            "UPDATE shown_cards SET tries = tries + 1,"
            f" due = CASE WHEN tries + 1 >= {MAX_TRIES} THEN 0 ELSE due END WHERE id IN ({{ids}})",
            [],
            ids,
        )
        marks = ", ".join("?" for _ in ids)
        (left,) = self.db.one(
            f"SELECT count(*) FROM shown_cards WHERE due = 1 AND id IN ({marks})", ids
        )
        return int(left) == 0

    def forget_tokens(self, now: dt.datetime) -> int:
        """Blank the tokens that expired before ``now`` (they can edit nothing any more)."""
        with self.db.write():
            cursor = self.db.execute(
                "UPDATE shown_cards SET token = '', token_expires = NULL"
                " WHERE token_expires IS NOT NULL AND token_expires < ?",
                [to_iso(now)],
            )
        return int(cursor.rowcount)

    def _update(self, sql: str, params: list[Any], ids: list[str]) -> None:
        if not ids:
            return
        marks = ", ".join("?" for _ in ids)
        with self.db.write():
            self.db.execute(sql.format(ids=marks), [*params, *ids])
