"""Migration m002: post vectors, for near-duplicate search.

Each check's post embedding (float32, little-endian, ``dim`` of them), so that a post
worded a little differently from one checked before is answered as a near repeat
(:mod:`storage.vectors`). The vector goes with its check; on PostgreSQL the table gets
a ``rowid`` column, the insertion order the near index is loaded in.
"""

from __future__ import annotations

from ..sql import StoreDatabase
from .shared import CASCADE, add_rowid

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute(
        f"""
        CREATE TABLE post_vectors (
            check_id TEXT PRIMARY KEY {CASCADE},
            dim INTEGER NOT NULL CHECK (dim > 0),
            vector BLOB NOT NULL CHECK (length(vector) = 4 * dim),
            created_at TEXT NOT NULL
        )
        """
    )
    add_rowid(db, "post_vectors")
