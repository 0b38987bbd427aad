"""The database as every part of the store uses it: with the store's lock and clock.

One :class:`LockedDatabase` is shared by the parts of a
:class:`~storage.store.CheckStore` (``store.checks``, ``store.reports`` …), as
sqlite-utils' tables share their ``Database``. Writes run in
:meth:`~LockedDatabase.write` (:attr:`~LockedDatabase.lock` and one write transaction);
reads go through :meth:`~LockedDatabase.rows` (or :meth:`~LockedDatabase.first`,
:meth:`~LockedDatabase.one`, :meth:`~LockedDatabase.dicts`), which hold the lock on
SQLite only, so one store may serve several threads.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from .errors import CheckNotFoundError, StorageError
from .postgres import is_postgres
from .rows import to_iso
from .sql import Cursor, Params, StoreDatabase, Table
from .transaction import write_transaction

__all__ = ["LockedDatabase", "StorePart"]


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class LockedDatabase:
    """An open database, the lock its users hold and the time source of what they store.

    Args:
        raw: a database from :func:`~storage.database.open_database` or
            :func:`~storage.opening.open_postgres`.
        clock: returns the current timezone-aware time; tests pass a fake one.
    """

    def __init__(
        self, raw: StoreDatabase, *, clock: Callable[[], dt.datetime] | None = None
    ) -> None:
        self.raw = raw
        self.clock = clock or _utc_now
        self.lock = threading.RLock()
        # One SQLite connection used by two threads at once can crash the process, so its
        # reads take the lock. psycopg's connection is safe to share between threads:
        # PostgresDatabase runs one statement (or transaction) at a time on it under its
        # own lock, and swaps in a reopened one under that lock too; its reads skip the
        # store's lock, so a read waiting for a lost connection holds up no other read,
        # no write and no close().
        self._reading: AbstractContextManager[Any] = (
            nullcontext() if is_postgres(raw) else self.lock
        )

    @property
    def is_postgres(self) -> bool:
        return is_postgres(self.raw)

    def now(self) -> str:
        """The clock's time as stored: fixed-width ISO 8601 text, UTC."""
        return to_iso(self.clock())

    @contextmanager
    def write(self) -> Iterator[None]:
        """Hold the lock and run the block in one write transaction (a savepoint when
        nested), rolled back if it raises."""
        with self.lock, write_transaction(self.raw):
            yield

    # -- reads ----------------------------------------------------------------------------

    def rows(self, sql: str, params: Params = None) -> list[tuple[Any, ...]]:
        """The rows of a read, fetched in full: under the store's lock on SQLite, and
        without it on PostgreSQL (see ``__init__``)."""
        with self._reading:
            return list(self.raw.execute(sql, params).fetchall())

    def first(self, sql: str, params: Params = None) -> tuple[Any, ...] | None:
        """The first row of a read (:meth:`rows`), or ``None`` when it has none."""
        found = self.rows(sql, params)
        return found[0] if found else None

    def one(self, sql: str, params: Params = None) -> tuple[Any, ...]:
        """The row of a read that always returns one (``count(*)``, ``max(…)``).

        Raises:
            StorageError: it returned none, which the database should never do.
        """
        found = self.first(sql, params)
        if found is None:
            raise StorageError("an aggregate query returned no row")
        return found

    def dicts(self, sql: str, params: Params = None) -> list[dict[str, Any]]:
        """The rows of a read as dicts, fetched in full, as :meth:`rows` reads them."""
        with self._reading:
            return list(self.raw.query(sql, params))

    # -- statements in a write, and writes -------------------------------------------------

    def execute(self, sql: str, params: Params = None) -> Cursor:
        """Run a statement under the store's lock (a write's, or one that writes); what
        it returns is fetched in full under the lock."""
        with self.lock:
            cursor = self.raw.execute(sql, params)
            rows = cursor.fetchall() if _returns_rows(cursor) else []
            return Fetched(rows, cursor.rowcount)

    def table(self, name: str) -> Table:
        return self.raw.table(name)

    def require_check(self, check_id: str) -> None:
        """Raise :class:`CheckNotFoundError` unless the check exists."""
        if self.execute("SELECT 1 FROM checks WHERE id = ?", [check_id]).fetchone() is None:
            raise CheckNotFoundError(f"no check {check_id!r}")

    def close(self) -> None:
        self.raw.close()


class Fetched:
    """A statement's result, read in full while the store's lock was held."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self._next = 0
        self._rowcount = rowcount

    @property
    def rowcount(self) -> int:
        return self._rowcount

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return tuple(self._rows[self._next - 1])

    def fetchall(self) -> list[Any]:
        rest, self._next = self._rows[self._next :], len(self._rows)
        return rest

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


def _returns_rows(cursor: Cursor) -> bool:
    """Whether the statement gave a result set (a SELECT, or ... RETURNING)."""
    return getattr(cursor, "description", None) is not None


class StorePart:
    """A part of a store (``store.checks``, ``store.reports`` …): its rows, read and
    written through the store's one database.

    Args:
        db: the store's database, with its lock and clock.
    """

    def __init__(self, db: LockedDatabase) -> None:
        self.db = db
