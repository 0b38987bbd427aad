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

    def execute(self, sql: str, params: Params = None) -> Cursor:
        return self.raw.execute(sql, params)

    def query(self, sql: str, params: Params = None) -> Iterator[dict[str, Any]]:
        return self.raw.query(sql, params)

    def table(self, name: str) -> Table:
        return self.raw.table(name)

    def require_check(self, check_id: str) -> None:
        """Raise :class:`CheckNotFoundError` unless the check exists."""
        if self.execute("SELECT 1 FROM checks WHERE id = ?", [check_id]).fetchone() is None:
            raise CheckNotFoundError(f"no check {check_id!r}")

    def close(self) -> None:
        self.raw.close()
