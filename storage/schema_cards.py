"""The schema's step m011: where each verdict card was shown, for corrections.

Kept apart from :mod:`storage.schema_steps` (m001 to m009) and
:mod:`storage.schema_shares` (m010) only so that each stays short;
:mod:`storage.migrations` lists every step in order.
"""

from __future__ import annotations

from .postgres import is_postgres
from .sql import StoreDatabase

__all__ = ["m011_shown_cards"]


def m011_shown_cards(db: StoreDatabase, secret: bytes | None) -> None:
    """Every verdict card a bot showed (:mod:`storage.shown_cards`): the check it answered,
    the check whose verdict it shows (``original_id``), the platform's raw chat and
    message ids, the verdict it shows, and whether a correction is due there. Discord's
    cards also keep the interaction token that can edit them (blanked once expired). The
    retention purge deletes the rows with their check's content."""
    db.execute(
        """
        CREATE TABLE shown_cards (
            id TEXT PRIMARY KEY,
            check_id TEXT NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
            original_id TEXT NOT NULL,
            platform TEXT NOT NULL,
            chat TEXT NOT NULL,
            message TEXT NOT NULL DEFAULT '',
            private INTEGER NOT NULL DEFAULT 0,
            token TEXT NOT NULL DEFAULT '',
            token_expires TEXT,
            verdict TEXT NOT NULL,
            due INTEGER NOT NULL DEFAULT 0,
            tries INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            corrected_at TEXT
        )
        """
    )
    db.execute(
        "CREATE UNIQUE INDEX idx_shown_cards_place"
        " ON shown_cards (check_id, platform, chat, message)"
    )
    if is_postgres(db):  # the insertion order SQLite's rowid gives: cards in the order shown
        db.execute("ALTER TABLE shown_cards ADD COLUMN rowid BIGINT GENERATED ALWAYS AS IDENTITY")
    db.execute("CREATE INDEX idx_shown_cards_original ON shown_cards (original_id, platform)")
    db.execute(
        "CREATE INDEX idx_shown_cards_due ON shown_cards (platform, original_id) WHERE due = 1"
    )
