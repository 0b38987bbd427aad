"""Migration m015: review notes go with their check's text.

A review's note and link may quote the post, so the retention purge must blank them
with the check's text; m009's append-only trigger refused that too. The trigger is
rebuilt to let exactly one change through: the note and link blanked, every other
column as it was. Any other ``UPDATE`` is still refused, with m009's message.
"""

from __future__ import annotations

from ..postgres import is_postgres
from ..sql import StoreDatabase
from .shared import APPEND_ONLY

__all__ = ["apply"]

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


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    same = " AND ".join(f"NEW.{column} = OLD.{column}" for column in _KEPT)
    blanked = f"NEW.note = '' AND NEW.link = '' AND {same}"
    if not is_postgres(db):
        db.execute("DROP TRIGGER reviews_append_only")
        db.execute(
            "CREATE TRIGGER reviews_append_only BEFORE UPDATE ON reviews"
            f" WHEN NOT ({blanked}) BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END"
        )
        return
    db.execute(
        "CREATE OR REPLACE FUNCTION reviews_append_only() RETURNS trigger LANGUAGE plpgsql"
        f" AS $$ BEGIN IF {blanked} THEN RETURN NEW; END IF;"
        f" RAISE EXCEPTION '{APPEND_ONLY}'; END $$"
    )
