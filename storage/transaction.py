"""Write transactions that take SQLite's write lock up front.

sqlite-utils 4 commits every statement that ``db.execute`` runs outside a
transaction, so ``with db.conn:`` does not make several statements atomic.
:func:`write_transaction` opens ``BEGIN IMMEDIATE`` instead: the write lock is
taken (waiting up to ``busy_timeout``) before anything is read, so two
processes never both read a snapshot and then fail to upgrade it. sqlite-utils'
own writes inside it (``table.insert``) nest as savepoints and commit with it.
On PostgreSQL the same block is :meth:`~storage.postgres.PostgresDatabase.transaction`,
which takes one advisory write lock first, to the same effect.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from sqlite_utils import Database

from .postgres import is_postgres
from .sql import StoreDatabase

__all__ = ["write_transaction"]


@contextmanager
def write_transaction(db: StoreDatabase) -> Iterator[StoreDatabase]:
    """Run the block in one write transaction, rolled back if it raises.

    Nested use becomes a savepoint of the enclosing transaction.

    Args:
        db: the database.

    Returns:
        A context manager yielding ``db``.

    Raises:
        TypeError: ``db`` is neither of the two databases the store runs on.
        sqlite3.OperationalError: the write lock was not free within ``busy_timeout``.
        psycopg.OperationalError: the PostgreSQL connection was lost mid-transaction.
    """
    if is_postgres(db):
        with db.transaction():
            yield db
        return
    if not isinstance(db, Database):
        raise TypeError(f"not a database the store runs on: {type(db).__name__}")
    conn = db.conn
    if conn.in_transaction:
        savepoint = f"zofia_{secrets.token_hex(8)}"
        conn.execute(f"SAVEPOINT {savepoint}")
        try:
            yield db
        except BaseException:
            if conn.in_transaction:
                conn.execute(f"ROLLBACK TO SAVEPOINT {savepoint}")
                conn.execute(f"RELEASE SAVEPOINT {savepoint}")
            raise
        conn.execute(f"RELEASE SAVEPOINT {savepoint}")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
