"""Migration m013: reviews scoped to a chat, and corrections that keep trying.

A review's ``chat``: the keyed chat (:func:`~storage.keys.hash_chat`) whose cards and
repeats it changes, ``''`` for every chat (a reviewer the settings name, or the
operator), so that a chat's own moderators change only what their chat sees. A shown
card's ``due_gen`` counts the changes made due on it, so that the sends of one change
never clear the next (compare and set); ``next_try_at`` is when a correction that
failed may be tried again, and ``due_since`` when it first fell due, so that it is
given up after about a day, not after a minute of outage.
"""

from __future__ import annotations

from ..sql import StoreDatabase

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute("ALTER TABLE reviews ADD COLUMN chat TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE shown_cards ADD COLUMN due_gen INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE shown_cards ADD COLUMN next_try_at TEXT")
    db.execute("ALTER TABLE shown_cards ADD COLUMN due_since TEXT")
