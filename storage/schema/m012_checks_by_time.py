"""Migration m012: an index on when each check was asked, for the day's window.

The day's token budget (:meth:`storage.checks.Checks.day_charges`, read in the write
transaction that admits an engine run) sums the checks asked since midnight, of
everyone; without an index on ``checks.created_at`` alone that read scanned every check
the store keeps.
"""

from __future__ import annotations

from ..sql import StoreDatabase

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute("CREATE INDEX idx_checks_created ON checks (created_at)")
