"""Migration m008: where each check's card is to be posted, for the bot that delivers it.

In the queued deployment a worker runs the check and a bot posts its card: any
replica, once (``claimed_at`` is a lease; ``delivered_at`` ends it; see
:mod:`storage.deliveries`). ``target_json`` holds the platform's raw chat and message
ids, needed to post, and is blanked on delivery; the retention purge deletes the row.
On PostgreSQL ``post_vectors`` also gets an index on its ``rowid``, which the near
index reads new vectors by (SQLite's rowid is its tables' key already).
"""

from __future__ import annotations

from ..postgres import is_postgres
from ..sql import StoreDatabase
from .shared import CASCADE

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute(
        f"""
        CREATE TABLE deliveries (
            check_id TEXT PRIMARY KEY {CASCADE},
            platform TEXT NOT NULL,
            target_json TEXT NOT NULL,
            created_at TEXT NOT NULL,
            claimed_at TEXT,
            delivered_at TEXT
        )
        """
    )
    if is_postgres(db):  # SQLite's rowid is its tables' key already
        db.execute("CREATE INDEX idx_post_vectors_rowid ON post_vectors (rowid)")
