"""Migration m005: the bots' "section already posted" marks get a table of their own.

The marks the bots' buttons leave (which section of a card was posted already) were
chat settings under ``opened:<check>:<kind>`` keys; they move to ``section_marks``,
tied to their check so that they go when it goes (:mod:`storage.chat_records`). The old
keys are moved on SQLite and then deleted; a PostgreSQL store starts after this step
and has none (the move uses SQLite-only string functions).
"""

from __future__ import annotations

from ..postgres import is_postgres
from ..sql import StoreDatabase
from .shared import CASCADE

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute(
        f"""
        CREATE TABLE section_marks (
            check_id TEXT NOT NULL {CASCADE},
            kind TEXT NOT NULL,
            value_json TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (check_id, kind)
        )
        """
    )
    if is_postgres(db):  # SQLite-only string functions, and no old marks to move
        return
    db.execute(
        """
        INSERT OR REPLACE INTO section_marks (check_id, kind, value_json, updated_at)
        SELECT substr(key, 8, instr(substr(key, 8), ':') - 1),
               substr(substr(key, 8), instr(substr(key, 8), ':') + 1),
               value_json, updated_at
        FROM chat_settings
        WHERE key LIKE 'opened:%:%'
          AND substr(key, 8, instr(substr(key, 8), ':') - 1) IN (SELECT id FROM checks)
        """
    )
    db.execute("DELETE FROM chat_settings WHERE key LIKE 'opened:%'")
