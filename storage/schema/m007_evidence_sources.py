"""Migration m007: evidence rows from every source a report has.

Published fact-checks and findings on the post's pictures besides web pages and
Wikipedia: the CHECK on ``evidence.source`` allowed the first two only, so a report
citing either could not be saved. SQLite cannot change a CHECK, so the table is rebuilt
with its rows.
"""

from __future__ import annotations

from ..sql import StoreDatabase
from .shared import CASCADE

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute(
        f"""
        CREATE TABLE evidence_v7 (
            check_id TEXT NOT NULL {CASCADE},
            evidence_id TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('web', 'wikipedia', 'factcheck', 'image')),
            provider TEXT NOT NULL,
            title TEXT NOT NULL,
            url TEXT NOT NULL,
            text TEXT,
            published TEXT,
            PRIMARY KEY (check_id, evidence_id)
        )
        """
    )
    db.execute("INSERT INTO evidence_v7 SELECT * FROM evidence")
    db.execute("DROP TABLE evidence")
    db.execute("ALTER TABLE evidence_v7 RENAME TO evidence")
