"""The schema's steps m013 to m015: reviews scoped to a chat, corrections that keep
trying, what follow-up questions cost, and review notes that go with their check's text.

:mod:`storage.migrations` lists every step in order.
"""

from __future__ import annotations

from .postgres import is_postgres
from .sql import StoreDatabase

__all__ = [
    "m013_review_scope_and_retries",
    "m014_follow_up_charges",
    "m015_purgeable_review_notes",
]

_APPEND_ONLY = "reviews are never edited: a newer review supersedes one"
# Every column of a review but its note and link: what the purge may never change.
_KEPT = (
    "id",
    "check_id",
    "reviewer",
    "platform",
    "created_at",
    "from_verdict",
    "to_verdict",
    "chat",
)


def m013_review_scope_and_retries(db: StoreDatabase, secret: bytes | None) -> None:
    """A review's ``chat``: the keyed chat (:func:`~storage.keys.hash_chat`) whose cards
    and repeats it changes, ``''`` for every chat (a reviewer the settings name, or the
    operator). A shown card's ``due_gen`` counts the changes made due on it, so that the
    sends of one change never clear the next (compare and set); ``next_try_at`` is when a
    correction that failed may be tried again, and ``due_since`` when it first fell due,
    so that it is given up after about a day, not after a minute of outage."""
    db.execute("ALTER TABLE reviews ADD COLUMN chat TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE shown_cards ADD COLUMN due_gen INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE shown_cards ADD COLUMN next_try_at TEXT")
    db.execute("ALTER TABLE shown_cards ADD COLUMN due_since TEXT")


def m014_follow_up_charges(db: StoreDatabase, secret: bytes | None) -> None:
    """What a follow-up question cost: ``attempts.tokens`` (the tokens its model call
    spent, counted in the day's budget and in the asker's and the chat's shares as a
    check's are) and ``attempts.check_id`` (the check it asked about). An index on when
    requests came lets the day's budget sum them without a scan."""
    db.execute("ALTER TABLE attempts ADD COLUMN tokens INTEGER")
    db.execute("ALTER TABLE attempts ADD COLUMN check_id TEXT")
    db.execute("CREATE INDEX idx_attempts_created ON attempts (created_at)")


def m015_purgeable_review_notes(db: StoreDatabase, secret: bytes | None) -> None:
    """The reviews' append-only trigger (m009) again, letting exactly one change through:
    the retention purge blanking a review's note and link with its check's text (every
    other column as it was). Any other ``UPDATE`` is still refused."""
    same = " AND ".join(f"NEW.{column} = OLD.{column}" for column in _KEPT)
    blanked = f"NEW.note = '' AND NEW.link = '' AND {same}"
    if not is_postgres(db):
        db.execute("DROP TRIGGER reviews_append_only")
        db.execute(
            "CREATE TRIGGER reviews_append_only BEFORE UPDATE ON reviews"
            f" WHEN NOT ({blanked}) BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END"
        )
        return
    db.execute(
        "CREATE OR REPLACE FUNCTION reviews_append_only() RETURNS trigger LANGUAGE plpgsql"
        f" AS $$ BEGIN IF {blanked} THEN RETURN NEW; END IF;"
        f" RAISE EXCEPTION '{_APPEND_ONLY}'; END $$"
    )
