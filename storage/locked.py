"""The database as every part of the store uses it: with the store's lock and clock.

One :class:`LockedDatabase` is shared by the parts of a
:class:`~storage.store.CheckStore` (``store.checks``, ``store.reports`` …), as
sqlite-utils' tables share their ``Database``. Reads hold :attr:`~LockedDatabase.lock`;
writes run in :meth:`~LockedDatabase.write` (the lock and one write transaction), so
one store may serve several threads.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .errors import CheckNotFoundError
from .postgres import is_postgres
from .rows import to_iso
from .sql import Cursor, Params, StoreDatabase, Table
from .transaction import write_transaction

__all__ = ["LockedDatabase"]


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

    # Reads take the lock too: the store's calls run on several threads (the bots' store
    # pool, the service's own off-loop calls), and one SQLite connection used by two
    # threads at once can crash the process. A read's rows are fetched under the lock.
    def execute(self, sql: str, params: Params = None) -> Cursor:
        with self.lock:
            cursor = self.raw.execute(sql, params)
            rows = cursor.fetchall() if _returns_rows(cursor) else []
            return Fetched(rows, cursor.rowcount)

    def query(self, sql: str, params: Params = None) -> Iterator[dict[str, Any]]:
        with self.lock:
            rows = list(self.raw.query(sql, params))
        return iter(rows)

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
