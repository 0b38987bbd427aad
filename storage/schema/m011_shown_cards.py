"""Migration m011: where each verdict card was shown, so that it can be corrected.

``shown_cards`` (:mod:`storage.shown_cards`): every verdict card a bot showed, with the
check it answered, the check whose verdict it shows (``original_id``), the platform's
raw chat and message ids, the verdict it shows, and whether a correction is due there
(a review or a recheck changed the verdict since). Discord's cards also keep the
interaction token that can edit them (blanked once expired). The retention purge
deletes the rows with their check's content. On PostgreSQL the table gets a ``rowid``
column: the cards in the order they were shown.
"""

from __future__ import annotations

from ..sql import StoreDatabase
from .shared import CASCADE, add_rowid

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute(
        f"""
        CREATE TABLE shown_cards (
            id TEXT PRIMARY KEY,
            check_id TEXT NOT NULL {CASCADE},
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
    add_rowid(db, "shown_cards")  # PostgreSQL: the cards in the order shown
    db.execute("CREATE INDEX idx_shown_cards_original ON shown_cards (original_id, platform)")
    db.execute(
        "CREATE INDEX idx_shown_cards_due ON shown_cards (platform, original_id) WHERE due = 1"
    )
