"""``store.reviews``: moderators' reviews of verdicts, an audit trail.

A review confirms a check's verdict or changes it to another outcome (true, false,
misleading, unproven), with a short note and an optional link. Rows are only ever
added: a review is never edited or deleted (the table refuses an ``UPDATE``), only
superseded by a newer review of the same check; :meth:`Reviews.latest` is the one in
force. A review is of an original check, and applies where it was made: a chat's
moderator's for that chat (``chat``: the keyed chat), a named reviewer's or the
operator's for every chat (``chat`` empty). In a chat, the newest review of either kind
is in force.

The store only appends, reads and counts the rows; who may review what, the limits,
and what a report shows with a review in force are the service's
(:mod:`bots.service.reviews`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from .keys import new_check_id, storable_text
from .locked import StorePart
from .rows import from_iso, to_iso

__all__ = ["Review", "Reviews", "Scope"]

#: where a review applies: a platform and its keyed chat; ``None`` is every chat's view
Scope = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Review:
    """One row of ``reviews``: who reviewed which check, when, and to what verdict.

    ``from_verdict`` is the verdict in force before it where it applies (the latest
    review's, else the machine's); ``to_verdict`` equal to it is a confirmation.
    ``reviewer`` is an HMAC of the platform and user id (:func:`~storage.keys.hash_user`),
    never the id; ``chat`` the keyed chat it applies to, ``""`` for every chat.
    """

    id: str
    check_id: str
    reviewer: str
    platform: str
    created_at: dt.datetime
    from_verdict: str
    to_verdict: str
    note: str
    link: str
    chat: str = ""

    @property
    def everywhere(self) -> bool:
        """Whether it applies in every chat (a named reviewer's, or the operator's)."""
        return not self.chat

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Review:
        created = from_iso(row["created_at"])
        assert created is not None
        fields = {name: row[name] for name in cls.__slots__ if name != "created_at"}
        return cls(created_at=created, **fields)


class Reviews(StorePart):
    """The moderators' reviews of a store's checks."""

    def add(self, review: Review) -> Review:
        """Record ``review`` (a new row; none is changed), with a new id and the store's
        time; the review as stored. Its check must be an original check."""
        row: dict[str, Any] = {
            "id": new_check_id(),
            "check_id": review.check_id,
            "reviewer": storable_text(review.reviewer),
            "platform": storable_text(review.platform),
            "created_at": self.db.now(),
            "from_verdict": review.from_verdict,
            "to_verdict": review.to_verdict,
            "note": storable_text(review.note),
            "link": storable_text(review.link),
            "chat": storable_text(review.chat),
        }
        with self.db.write():
            self.db.table("reviews").insert(row)
        return Review.from_row(row)

    def recent(
        self, since: dt.datetime, *, reviewer: str = "", check: tuple[str, str] | None = None
    ) -> list[dt.datetime]:
        """When the reviews made since ``since`` were, oldest first: ``reviewer``'s, or
        those of one ``check`` in one keyed chat (``(check id, chat)``)."""
        if check is not None:
            where, params = "check_id = ? AND chat = ?", list(check)
        else:
            where, params = "reviewer = ?", [reviewer]
        rows = self.db.rows(
            f"SELECT created_at FROM reviews WHERE {where} AND created_at >= ? ORDER BY created_at",
            [*params, to_iso(since)],
        )
        return [when for row in rows if (when := from_iso(str(row[0]))) is not None]

    def latest(self, check_id: str, scope: Scope | None = None) -> Review | None:
        """The review in force on a check where ``scope`` looks (the newest of those for
        every chat and, given a scope, those of that chat), or ``None``."""
        found = self.history(check_id, limit=1, scope=scope)
        return found[0] if found else None

    def history(
        self, check_id: str, *, limit: int | None = None, scope: Scope | None = None
    ) -> list[Review]:
        """A check's reviews, newest first: the audit trail (all of them, or those that
        apply where ``scope`` looks: for every chat, and that chat's)."""
        sql = "SELECT * FROM reviews WHERE check_id = ?"
        params: list[Any] = [check_id]
        if scope is not None:
            sql += " AND (chat = '' OR (platform = ? AND chat = ?))"
            params += list(scope)
        elif limit is not None:
            sql += " AND chat = ''"
        sql += " ORDER BY created_at DESC, rowid DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [Review.from_row(row) for row in self.db.dicts(sql, params)]
