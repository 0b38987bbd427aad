"""Migration m014: what a follow-up question cost.

A reader's follow-up question on a finished check runs a model call too, so it is
charged as a check is: ``attempts.tokens`` (the tokens its model call spent, counted in
the day's budget and in the asker's and the chat's shares) and ``attempts.check_id``
(the check it asked about). An index on when requests came lets the day's budget sum
them without a scan.
"""

from __future__ import annotations

from ..sql import StoreDatabase

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute("ALTER TABLE attempts ADD COLUMN tokens INTEGER")
    db.execute("ALTER TABLE attempts ADD COLUMN check_id TEXT")
    db.execute("CREATE INDEX idx_attempts_created ON attempts (created_at)")
