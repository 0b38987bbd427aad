"""The schema's step m012: an index on when each check was asked, for the day's window.

Kept apart from :mod:`storage.schema_steps` (m001 to m009), :mod:`storage.schema_shares`
(m010) and :mod:`storage.schema_cards` (m011) only so that each stays short;
:mod:`storage.migrations` lists every step in order.
"""

from __future__ import annotations

from .sql import StoreDatabase

__all__ = ["m012_checks_by_time"]


def m012_checks_by_time(db: StoreDatabase, secret: bytes | None) -> None:
    """Checks by ``created_at`` alone: the day's token budget
    (:meth:`storage.checks.Checks.day_charges`, read in the write transaction that admits
    an engine run) sums the checks asked since midnight, of everyone; without it that
    read scanned every check the store keeps."""
    db.execute("CREATE INDEX idx_checks_created ON checks (created_at)")
