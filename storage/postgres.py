"""The store on PostgreSQL, through psycopg 3, with the surface the store uses of sqlite-utils.

:class:`PostgresDatabase` answers ``execute``, ``query``, ``table(name).insert /
insert_all / upsert / exists``, ``table_names`` and ``close`` as
``sqlite_utils.Database`` does, so :class:`~storage.store.CheckStore`, the
migrations and the retention purge are written once, in the SQL both engines
speak. The statements keep SQLite's ``?`` and ``:name`` placeholders; they are
rewritten to psycopg's here.

Why psycopg 3 and not asyncpg: Procrastinate, the job queue, is built on it, so the
queue and the store share one driver and a job can be deferred in the same
transaction as the row it works on; and the store is synchronous (it runs in a
thread, as on SQLite), which psycopg supports and asyncpg does not.

What keeps the guarantees the same as on SQLite:

- a write transaction takes one advisory lock first (SQLite's ``BEGIN IMMEDIATE``
  write lock), so read-then-write decisions such as "is this text already being
  checked?" are serialised across every process, as they are on one SQLite file;
- ``checks``, ``post_vectors`` and ``_migrations`` get an identity column named
  ``rowid``, so "insertion order" reads the same on both;
- a connection lost outside a transaction (a server restart) is reopened and the
  statement tried again for up to :data:`RECONNECT_S`, without holding the lock other
  threads' statements take (they are not kept waiting by its sleeps); inside a
  transaction the error is raised, and the unit of work is retried whole by whoever
  owns it.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeGuard

import psycopg
from psycopg.rows import dict_row

from .sql import StoreDatabase

__all__ = [
    "RECONNECT_S",
    "PostgresDatabase",
    "StoreDatabase",
    "consistent",
    "is_postgres",
    "to_psycopg",
]

# Key of the advisory lock every write transaction takes ("zofia" in ASCII).
WRITE_LOCK = 0x7A6F666961
RECONNECT_S = 30.0
LOCK_TIMEOUT_MS = 30_000
IDLE_IN_TRANSACTION_MS = 60_000
_TOKENS = re.compile(r"'(?:[^']|'')*'|\?|(?<!:):([A-Za-z_]\w*)|%")
_SQLITE_TYPES = ((re.compile(r"\bBLOB\b"), "BYTEA"), (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"))


def to_psycopg(sql: str) -> str:
    """``sql`` with SQLite's ``?`` and ``:name`` placeholders as psycopg's ``%s`` and
    ``%(name)s``, and a literal ``%`` doubled; string literals are left as they are."""

    def swap(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith("'"):
            return token.replace("%", "%%")
        if token == "?":
            return "%s"
        if token == "%":
            return "%%"
        return f"%({match.group(1)})s"

    return _TOKENS.sub(swap, sql)


def _ddl(sql: str) -> str:
    """SQLite column types PostgreSQL names otherwise (``REAL`` is 4 bytes there)."""
    if not sql.lstrip().upper().startswith(("CREATE TABLE", "ALTER TABLE")):
        return sql
    for pattern, name in _SQLITE_TYPES:
        sql = pattern.sub(name, sql)
    return sql


def _stored(value: Any) -> Any:
    """A value as SQLite stores it: ``True`` / ``False`` are the integers 1 / 0 there."""
    return int(value) if isinstance(value, bool) else value


def _params(params: Sequence[Any] | dict[str, Any] | None) -> Any:
    if params is None:
        return None
    if isinstance(params, dict):
        return {name: _stored(value) for name, value in params.items()}
    return [_stored(value) for value in params]


def is_postgres(db: object) -> TypeGuard[PostgresDatabase]:
    """Whether ``db`` is a :class:`PostgresDatabase` (else sqlite-utils' ``Database``)."""
    return isinstance(db, PostgresDatabase)


class PostgresDatabase:
    """One psycopg connection (autocommit outside :meth:`transaction`), reopened when lost.

    Statements and transactions take the connection one at a time (a lock); a lost
    connection is reopened without it, so a thread waiting for the server to come back
    keeps no other thread waiting on the lock meanwhile (they wait for the server too,
    each in its own thread, or go on once one of them has reopened it).

    Args:
        url: a ``postgresql://`` URL.
        connect_timeout_s: how long one connection attempt may take.
    """

    def __init__(self, url: str, *, connect_timeout_s: float = 10.0) -> None:
        self.url = url
        self._timeout = connect_timeout_s
        self._lock = threading.RLock()
        self._depth = 0
        self._owner: int | None = None  # the thread whose transaction is open
        self._closed = False
        self._conn = self._connect()

    def _connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(
            self.url,
            autocommit=True,
            connect_timeout=max(1, round(self._timeout)),
            # A process frozen inside a transaction holds the write lock of every other:
            # the server ends such a session, and waits for the lock are bounded.
            options=f"-c lock_timeout={LOCK_TIMEOUT_MS} -c idle_in_transaction_session_timeout="
            f"{IDLE_IN_TRANSACTION_MS}",
            keepalives=1,
            keepalives_idle=30,
            keepalives_interval=10,
            keepalives_count=3,
        )

    def _in_own_transaction(self) -> bool:
        return self._owner == threading.get_ident()

    def current(self) -> psycopg.Connection[Any]:
        """The connection of this thread's open transaction; outside one, a healthy
        connection (reopened, waiting up to :data:`RECONNECT_S`, if it was lost)."""
        if not self._in_own_transaction():
            self._reopen_if_lost()
        return self._conn

    def _reopen_if_lost(self) -> None:
        """Reopen the connection if it was lost, trying for up to :data:`RECONNECT_S`.
        Never called with the lock held: the wait (and its sleeps) keeps no one else
        from the connection, and the fresh one is swapped in under the lock."""
        deadline = time.monotonic() + RECONNECT_S
        while _lost(self._conn):
            if self._closed:
                raise psycopg.InterfaceError("the store's database was closed")
            try:
                fresh = self._connect()
            except psycopg.OperationalError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.5)
                continue
            with self._lock:
                old = self._conn
                if _lost(old) and not self._closed:  # not reopened by another thread meanwhile
                    self._conn, fresh = fresh, old
            fresh.close()

    # -- the sqlite-utils surface --------------------------------------------------------

    def execute(
        self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None
    ) -> psycopg.Cursor[Any]:
        """Run one statement; the cursor has ``fetchone``, ``fetchall``, ``rowcount``."""
        return self._run(sql, params, row_factory=None)

    def query(
        self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None
    ) -> Iterator[dict[str, Any]]:
        """The rows of a ``SELECT``, as dicts."""
        yield from self._run(sql, params, row_factory=dict_row).fetchall()

    def _run(self, sql: str, params: Any, *, row_factory: Any) -> psycopg.Cursor[Any]:
        statement = to_psycopg(_ddl(sql))
        values = _params(params)
        retried = False
        for _ in range(3):
            if not self._in_own_transaction():
                self._reopen_if_lost()  # outside the lock
            with self._lock:
                conn = self._conn
                in_transaction = self._depth > 0  # this thread's: it holds the lock
                if not in_transaction and _lost(conn):
                    continue  # lost again meanwhile: reopen it first, outside the lock
                cursor = conn.cursor(row_factory=row_factory) if row_factory else conn.cursor()
                try:
                    return cursor.execute(statement, values)
                except psycopg.OperationalError:
                    # Lost mid-statement: outside a transaction, reconnect and try once more.
                    if in_transaction or retried or not conn.broken:
                        raise
                    retried = True
        raise psycopg.OperationalError("the store's connection was lost again as it was reopened")

    def table(self, name: str) -> _Table:
        return _Table(self, name)

    def table_names(self) -> list[str]:
        rows = self.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
        ).fetchall()
        return [row[0] for row in rows]

    def close(self) -> None:
        """Close the connection once no statement runs on it (a thread waiting for a lost
        connection to come back stops waiting, and fails)."""
        self._closed = True
        with self._lock:  # psycopg's close() would not wait for a statement under way
            self._conn.close()

    # -- transactions --------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[PostgresDatabase]:
        """One transaction (a savepoint when nested) holding the store's write lock."""
        if self._in_own_transaction():
            with self._lock, self._conn.transaction():  # a savepoint
                self._depth += 1
                try:
                    yield self
                finally:
                    self._depth -= 1
            return
        with self._begin():
            yield self

    @contextmanager
    def _begin(self) -> Iterator[None]:
        """An outermost transaction with the write lock taken. A connection lost while it
        was idle is reopened first, outside the lock; one found dead at the start (the
        server restarted meanwhile) is reopened once more: nothing of it had run yet."""
        for attempt in range(2):
            self._reopen_if_lost()
            with self._lock:
                conn = self._conn
                started = False
                try:
                    with conn.transaction():
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK])
                        started = True
                        self._owner, self._depth = threading.get_ident(), 1
                        try:
                            yield
                        finally:
                            self._owner, self._depth = None, 0
                    return
                except psycopg.OperationalError:
                    if started or attempt or not conn.broken:
                        raise


def _lost(conn: psycopg.Connection[Any]) -> bool:
    return conn.closed or conn.broken


class _Table:
    """``db.table(name)``: the writes the store makes through sqlite-utils' tables."""

    def __init__(self, db: PostgresDatabase, name: str) -> None:
        self.db = db
        self.name = name

    def exists(self) -> bool:
        return self.name in self.db.table_names()

    def insert(self, row: dict[str, Any]) -> None:
        self.insert_all([row])

    def insert_all(self, rows: Sequence[dict[str, Any]]) -> None:
        if not rows:
            return
        columns = list(dict.fromkeys(key for row in rows for key in row))
        names = ", ".join(f'"{column}"' for column in columns)
        marks = ", ".join("%s" for _ in columns)
        sql = f'INSERT INTO "{self.name}" ({names}) VALUES ({marks})'
        values = [[_stored(row.get(column)) for column in columns] for row in rows]
        with self.db.transaction():
            self.db.current().cursor().executemany(sql, values)

    def upsert(self, row: dict[str, Any], *, pk: Sequence[str]) -> None:
        columns = list(row)
        names = ", ".join(f'"{column}"' for column in columns)
        marks = ", ".join(f"%({column})s" for column in columns)
        keys = ", ".join(f'"{column}"' for column in pk)
        updates = ", ".join(f'"{c}" = EXCLUDED."{c}"' for c in columns if c not in pk)
        action = f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
        sql = f'INSERT INTO "{self.name}" ({names}) VALUES ({marks}) ON CONFLICT ({keys}) {action}'
        with self.db.transaction():
            self.db.current().execute(sql, _params(row))


_STORE_INDEXES = """
    SELECT c.oid FROM pg_index i
    JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_am am ON am.oid = c.relam
    JOIN pg_class t ON t.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE am.amname = 'btree' AND n.nspname = current_schema()
"""


def consistent(db: PostgresDatabase) -> bool:
    """Whether amcheck finds every B-tree index of the schema consistent with its table
    (``bt_index_check`` with ``heapallindexed``: each row is found in each index).

    The ``amcheck`` extension is created when missing; a role that may not create it
    gets ``False``, not a pass it did not earn.
    """
    try:
        with db.transaction():
            db.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
            for (oid,) in db.execute(_STORE_INDEXES).fetchall():
                db.execute("SELECT bt_index_check(?::regclass, true)", [oid])
    except psycopg.Error:
        return False
    return True
