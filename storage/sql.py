"""What the store needs of a database, which sqlite-utils' ``Database`` and
:class:`~storage.postgres.PostgresDatabase` both provide.

Every part of the store, the migrations and the retention purge are written against
:class:`StoreDatabase`, so that one query serves both engines. A fetched row may be
``None``; :func:`first_row` is for the queries that always return one (aggregates).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from .errors import StorageError

__all__ = ["Cursor", "Params", "StoreDatabase", "Table", "first_row"]

#: ``?`` placeholders take a sequence, ``:name`` placeholders a dict
Params = Sequence[Any] | dict[str, Any] | None


class Cursor(Protocol):
    """The result of :meth:`StoreDatabase.execute`."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> tuple[Any, ...] | None: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Table(Protocol):
    """``db.table(name)``: the writes the store makes through sqlite-utils' tables."""

    def exists(self) -> bool: ...

    def insert(self, record: dict[str, Any], /) -> object: ...

    def insert_all(self, records: list[dict[str, Any]], /) -> object: ...

    def upsert(self, record: dict[str, Any], /, *, pk: tuple[str, ...]) -> object: ...


class StoreDatabase(Protocol):
    """A database the store runs on: sqlite-utils' ``Database``, or PostgreSQL's."""

    def execute(self, sql: str, params: Params = None, /) -> Cursor: ...

    def query(self, sql: str, params: Params = None, /) -> Iterator[dict[str, Any]]: ...

    def table(self, name: str, /) -> Table: ...

    def table_names(self) -> list[str]: ...

    def close(self) -> None: ...


def first_row(cursor: Cursor) -> tuple[Any, ...]:
    """The row of a query that always returns one (``count(*)``, ``max(…)``).

    Raises:
        StorageError: it returned none, which the database should never do.
    """
    row = cursor.fetchone()
    if row is None:
        raise StorageError("an aggregate query returned no row")
    return row
