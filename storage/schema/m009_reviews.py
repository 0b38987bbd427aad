"""Migration m009: moderators' reviews of verdicts, an audit trail.

``reviews`` (:mod:`storage.reviews`): who changed which check's verdict from what to
what, with a note and a link. Rows are only ever added (a trigger refuses an
``UPDATE``, on SQLite and PostgreSQL alike); the newest is the one in force, so the
trail of earlier reviews stays as it was written. On PostgreSQL the table gets a
``rowid`` column, the insertion order that breaks ties between reviews of one instant.
"""

from __future__ import annotations

from ..postgres import is_postgres
from ..sql import StoreDatabase
from .shared import APPEND_ONLY, CASCADE, add_rowid

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute(
        f"""
        CREATE TABLE reviews (
            id TEXT PRIMARY KEY,
            check_id TEXT NOT NULL {CASCADE},
            reviewer TEXT NOT NULL,
            platform TEXT NOT NULL,
            created_at TEXT NOT NULL,
            from_verdict TEXT NOT NULL,
            to_verdict TEXT NOT NULL
                CHECK (to_verdict IN ('true', 'false', 'misleading', 'unproven')),
            note TEXT NOT NULL DEFAULT '',
            link TEXT NOT NULL DEFAULT ''
        )
        """
    )
    db.execute("CREATE INDEX idx_reviews_check ON reviews (check_id, created_at)")
    add_rowid(db, "reviews")
    trigger = "CREATE TRIGGER reviews_append_only BEFORE UPDATE ON reviews"
    if not is_postgres(db):
        db.execute(f"{trigger} BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END")
        return
    db.execute(
        "CREATE FUNCTION reviews_append_only() RETURNS trigger LANGUAGE plpgsql"
        f" AS $$ BEGIN RAISE EXCEPTION '{APPEND_ONLY}'; END $$"
    )
    db.execute(f"{trigger} FOR EACH ROW EXECUTE FUNCTION reviews_append_only()")
