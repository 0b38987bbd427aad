"""``store.attempts``: the ``attempts`` table, one row per request the limits let in.

The rate limits count attempts, not stored checks: a request costs its sender from
the moment it is admitted, before any link is fetched or image decoded, so a failed
fetch, a refused image or an image with no text counts like a check. Each row is
written in the same write transaction that counted the limits
(:meth:`bots.service.limits.RequestLimits.admit`), so a burst of concurrent requests cannot
all pass a limit that each alone would meet. An attempt ends (``ended_at``) when its
answer is out; an attempt not ended is "in flight" for the one-at-a-time rule of
private chats. Rows hold keyed ids only, and go after a day (:meth:`Attempts.forget`).
"""

from __future__ import annotations

import datetime as dt
import secrets

from .keys import storable_text
from .locked import StorePart
from .request_counts import RequestScope, count_since, oldest_since
from .rows import to_iso

__all__ = ["Attempts"]


class Attempts(StorePart):
    """The attempts of a store."""

    def add(self, *, platform: str, chat: str, requester: str, private: bool) -> str:
        """Record an admitted request (in the caller's write transaction, when there is
        one) and return its id. ``chat`` and ``requester`` are keyed ids."""
        attempt_id = secrets.token_urlsafe(12)
        with self.db.write():
            self.db.table("attempts").insert(
                {
                    "id": attempt_id,
                    "platform": storable_text(platform),
                    "chat": storable_text(chat),
                    "requester": storable_text(requester),
                    "private": int(private),
                    "created_at": self.db.now(),
                    "ended_at": None,
                }
            )
        return attempt_id

    def end(self, attempt_id: str) -> None:
        """Mark the attempt answered (a card, a sentence, or given up); idempotent."""
        with self.db.write():
            self.db.execute(
                "UPDATE attempts SET ended_at = ? WHERE id = ? AND ended_at IS NULL",
                [self.db.now(), attempt_id],
            )

    def charge(self, attempt_id: str, tokens: int, check_id: str) -> None:
        """A follow-up question's cost: the tokens its model call spent on ``check_id``
        (counted in the day's budget with the checks', :meth:`Checks.day_charges`)."""
        with self.db.write():
            self.db.execute(
                "UPDATE attempts SET tokens = coalesce(tokens, 0) + ?, check_id = ? WHERE id = ?",
                [tokens, check_id, attempt_id],
            )

    def end_open(self) -> int:
        """End every attempt still open (a process starting alone: none of them has a
        live requester any more). Returns how many it ended."""
        with self.db.write():
            cursor = self.db.execute(
                "UPDATE attempts SET ended_at = ? WHERE ended_at IS NULL", [self.db.now()]
            )
        return max(0, cursor.rowcount)

    def count(
        self, scope: RequestScope, *, up_to: int | None = None, open_in_private: bool = False
    ) -> int:
        """How many requests ``scope`` holds were admitted (``open_in_private``: of those,
        the ones in private chats not yet answered), counting no further than ``up_to``."""
        also = "t.private = 1 AND t.ended_at IS NULL" if open_in_private else ""
        return count_since(self.db, "attempts", scope, up_to=up_to, also=also)

    def oldest(self, scope: RequestScope) -> dt.datetime | None:
        """When the oldest of the attempts :meth:`count` counts was made (a limit of N per
        window frees a slot at ``oldest + window``), or ``None`` if there is none."""
        return oldest_since(self.db, "attempts", scope)

    def forget(self, before: dt.datetime) -> int:
        """Delete the attempts made before ``before`` (no limit looks back that far).
        Returns how many went."""
        with self.db.write():
            cursor = self.db.execute("DELETE FROM attempts WHERE created_at < ?", [to_iso(before)])
        return max(0, cursor.rowcount)
