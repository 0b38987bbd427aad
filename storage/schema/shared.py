"""What several migrations share: the type of a migration, the foreign key to ``checks``
that drops a row with its check, PostgreSQL's ``rowid`` column, and the message of the
reviews' append-only trigger.

Each of these is written once because the migrations that use it must agree (the
trigger m015 rebuilds raises m009's message). A released migration never changes, so
neither does what it uses here.
"""

from __future__ import annotations

from collections.abc import Callable

from ..postgres import is_postgres
from ..sql import StoreDatabase

__all__ = ["APPEND_ONLY", "CASCADE", "Migration", "add_rowid"]

Migration = Callable[[StoreDatabase, bytes | None], None]
"""A migration: it changes the database (in the runner's write transaction), given the
store's secret for the steps that rewrite stored identities (``None`` when not known)."""

CASCADE = "REFERENCES checks(id) ON DELETE CASCADE"

APPEND_ONLY = "reviews are never edited: a newer review supersedes one"


def add_rowid(db: StoreDatabase, table: str) -> None:
    """PostgreSQL: the insertion-order column SQLite gives every table, named ``rowid``
    as SQLite's implicit one, so that the queries ordering by it read alike on both."""
    if is_postgres(db):
        db.execute(f"ALTER TABLE {table} ADD COLUMN rowid BIGINT GENERATED ALWAYS AS IDENTITY")
