"""Where each check's card goes, and which bot replica posts it, once.

A bot that asks for a check records where its answer belongs (the chat and the
"checking…" message, as the platform names them). When the check ends, a ``deliver``
job is queued; whichever replica runs it claims the delivery with a lease, posts the
card and marks it delivered. A replica that dies holding the claim loses nothing:
the lease runs out and the job's next attempt claims it again. The target, with its
raw ids, is sealed (:mod:`storage.sealing`: encrypted under a key derived from the
store's secret) and opened only by the replica that posts the card; it is blanked
(``'{}'``) once the card is posted, and the retention purge deletes the row.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from .keys import storable_text
from .locked import LockedDatabase
from .rows import to_iso
from .sealing import Sealer

__all__ = ["Claim", "Deliveries"]

#: a target blanked once its card is posted (or its jobs gave up): never sealed
_BLANK = "{}"


@dataclass(frozen=True)
class Claim:
    """A delivery this replica holds: post the card, then :meth:`Deliveries.delivered`."""

    check_id: str
    platform: str
    target: dict[str, Any]
    #: when this replica claimed it, as stored: the claim is this replica's while the
    #: row still holds it (another replica that takes over a lapsed lease writes its own)
    claimed_at: str = ""


class Deliveries:
    """The ``deliveries`` table of a store: ``store.deliveries``.

    Args:
        db: the store's database, with its lock and clock.
        sealer: seals the targets (their raw ids).
        lease: how long a claim keeps other replicas off a delivery.
    """

    def __init__(
        self,
        db: LockedDatabase,
        sealer: Sealer,
        *,
        lease: dt.timedelta = dt.timedelta(seconds=60),
    ) -> None:
        self.db = db
        self.sealer = sealer
        self.lease = lease

    def expect(self, check_id: str, platform: str, target: dict[str, Any]) -> bool:
        """Record where ``check_id``'s card goes (replacing an earlier target).

        Returns:
            Whether the check has already ended, in which case nobody will queue its
            delivery any more and the caller queues it (in the same transaction).
        """
        row = {
            "check_id": check_id,
            "platform": storable_text(platform),
            "target_json": self.sealer.seal(json.dumps(target, allow_nan=False)),
            "created_at": self.db.now(),
            "claimed_at": None,
            "delivered_at": None,
        }
        with self.db.write():
            self.db.table("deliveries").upsert(row, pk=("check_id",))
            status = self.db.execute(
                "SELECT status FROM checks WHERE id = ?", [check_id]
            ).fetchone()
        return status is not None and status[0] in ("done", "failed")

    def pending(self, check_ids: list[str]) -> list[tuple[str, str]]:
        """``(check_id, platform)`` of the undelivered ones among ``check_ids``."""
        if not check_ids:
            return []
        marks = ", ".join("?" for _ in check_ids)
        rows = self.db.rows(
            f"SELECT check_id, platform FROM deliveries WHERE check_id IN ({marks})"
            " AND delivered_at IS NULL ORDER BY check_id",
            check_ids,
        )
        return [(row[0], row[1]) for row in rows]

    def claim(self, check_id: str) -> Claim | None:
        """Take the delivery of ``check_id`` for this replica for :attr:`lease`.

        Returns:
            The claim, or ``None`` when it was delivered already, was never
            expected, or another replica's lease on it is still running.
        """
        stale = to_iso(self.db.clock() - self.lease)
        with self.db.write():
            row = self.db.execute(
                "SELECT platform, target_json FROM deliveries WHERE check_id = ?"
                " AND delivered_at IS NULL AND (claimed_at IS NULL OR claimed_at < ?)",
                [check_id, stale],
            ).fetchone()
            if row is None:
                return None
            claimed_at = self.db.now()
            self.db.execute(
                "UPDATE deliveries SET claimed_at = ? WHERE check_id = ?",
                [claimed_at, check_id],
            )
        target = json.loads(self.sealer.open(row[1])) if row[1] != _BLANK else {}
        return Claim(check_id, row[0], target, claimed_at)

    def is_claimed(self, check_id: str) -> bool:
        """Whether a delivery is still to be made and someone holds it now."""
        row = self.db.first(
            "SELECT claimed_at FROM deliveries WHERE check_id = ? AND delivered_at IS NULL",
            [check_id],
        )
        return row is not None and row[0] is not None

    def delivered(self, claim: Claim) -> bool:
        """The card is posted: end the delivery and forget the platform's raw ids.

        Returns:
            Whether the claim was still this replica's (else nothing is written: the
            replica that took the lapsed lease over ends it).
        """
        return self._if_held(claim, "delivered_at = ?, target_json = '{}'", [self.db.now()])

    def release(self, claim: Claim) -> bool:
        """Posting failed: let the next attempt (here or on another replica) claim it.

        Returns:
            Whether the claim was still this replica's (else another's claim stands).
        """
        return self._if_held(claim, "claimed_at = NULL", [])

    def _if_held(self, claim: Claim, assignments: str, params: list[Any]) -> bool:
        """Set ``assignments`` on the claim's row only while the claim is this replica's:
        the one rule of ownership (the row undelivered, still stamped with its
        ``claimed_at``). Returns whether it was."""
        sql = (
            f"UPDATE deliveries SET {assignments}"
            " WHERE check_id = ? AND claimed_at = ? AND delivered_at IS NULL"
        )
        return self._write(sql, [*params, claim.check_id, claim.claimed_at]) > 0

    def forget_stale(self, older_than: dt.datetime) -> int:
        """Blank the raw ids of deliveries that never happened (their jobs gave up)
        and were expected before ``older_than``; returns how many."""
        return self._write(
            "UPDATE deliveries SET target_json = '{}' WHERE delivered_at IS NULL"
            " AND created_at < ? AND target_json != '{}'",
            [to_iso(older_than)],
        )

    def drop(self, check_id: str) -> None:
        """Nobody waits for this card any more (the requester cancelled)."""
        self._write("DELETE FROM deliveries WHERE check_id = ?", [check_id])

    def _write(self, sql: str, params: list[Any]) -> int:
        """Run one statement in a write transaction; returns the rows it changed."""
        with self.db.write():
            cursor = self.db.execute(sql, params)
        return int(cursor.rowcount)
