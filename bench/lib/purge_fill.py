"""Not a bench script: the purge phase's store of ``bench/loop_stall.py`` (``bench/lib/``
holds such helpers): old checks copied in bulk on the server, and the rows the database
writes from a mark on (see that script's docstring)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import psycopg
import sqlite_utils

# The repository is on sys.path (for the tests package): bench/loop_stall.py puts it there first.
from tests.factories import sample_report
from tests.peers.fakes.fake_checker import HashingEncoder

from storage.keys import keyed_text_hash
from storage.postgres import is_postgres
from storage.rows import to_iso
from storage.sql import first_row
from storage.store import CheckStore
from storage.transaction import write_transaction
from zofia_engine.post import Post

FILL_BATCH = 10_000  # old checks copied per transaction


def _columns(db: Any, table: str) -> list[str]:
    """The columns an insert names (on PostgreSQL, not the identity ``rowid``)."""
    if is_postgres(db):
        rows = db.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema ="
            " current_schema() AND table_name = ? AND is_identity = 'NO'"
            " ORDER BY ordinal_position",
            [table],
        ).fetchall()
        return [row[0] for row in rows]
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})").fetchall()]


def fill_old_checks(store: CheckStore, secret: bytes, count: int) -> None:
    """``count`` checks older than any retention, each a copy of one check with a full
    report (every row it has in every table), copied on the server by ``INSERT …
    SELECT`` over a recursive series, ``FILL_BATCH`` checks a transaction."""
    template = store.checks.create(
        platform="telegram",
        chat="c",
        requester="r",
        post=Post(text="The template post of the purge bench."),
        text_hash=keyed_text_hash(secret, "The template post of the purge bench."),
    )
    store.reports.save(
        template.id,
        sample_report(0),
        vector=HashingEncoder().encode(["The template post of the purge bench."])[0],
    )
    db = store.db
    old = to_iso(dt.datetime.now(dt.UTC) - dt.timedelta(days=400))
    # Ids of 16 characters, as new_check_id's, one per number of the series.
    new_id = "'o' || CAST(100000000000000 + g.n AS TEXT)"
    per_check = {
        "id": new_id,
        "chat": "'chat-' || CAST(g.n % 1000 AS TEXT)",
        "requester": "'user-' || CAST(g.n % 5000 AS TEXT)",
        "post_text": "'An old post, number ' || CAST(g.n AS TEXT)",
        "text_hash": "'old-' || CAST(g.n AS TEXT)",
        "check_id": new_id,
        "created_at": ":old",
        "started_at": ":old",
        "finished_at": ":old",
    }
    plans = []
    for table in sorted(db.table_names(), key=lambda name: name != "checks"):
        columns = _columns(db, table)
        key = "id" if table == "checks" else "check_id"
        if key not in columns or table == "reviews":  # a review's own id is its key
            continue
        if not db.execute(f"SELECT 1 FROM {table} WHERE {key} = ?", [template.id]).fetchall():
            continue
        names = ", ".join(columns)
        values = ", ".join(per_check.get(column, f"t.{column}") for column in columns)
        plans.append(
            f"INSERT INTO {table} ({names})"
            " WITH RECURSIVE g(n) AS (SELECT CAST(:lo AS INTEGER)"
            " UNION ALL SELECT n + 1 FROM g WHERE n < :hi)"
            f" SELECT {values} FROM {table} t CROSS JOIN g WHERE t.{key} = :template"
        )
    for lo in range(1, count + 1, FILL_BATCH):
        params = {"lo": lo, "hi": min(count, lo + FILL_BATCH - 1), "old": old}
        with write_transaction(db):
            for plan in plans:  # checks first (sorted so): the others reference them
                db.execute(plan, params | {"template": template.id})
    # Start from the steady state of a store that grew check by check.
    if is_postgres(db):
        db.execute("VACUUM ANALYZE")  # what autovacuum would have done by now
    else:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


class RowsWritten:
    """Rows the store's database writes from :meth:`mark` on (see bench/loop_stall.py)."""

    def __init__(self, store: CheckStore) -> None:
        self.db = store.db
        self._mark = 0
        self._counts: dict[str, int] = {}

    def _tables(self) -> list[str]:
        return [t for t in self.db.table_names() if not t.startswith("procrastinate")]

    def _sqlite_changes(self) -> int:
        """Rows the SQLite store's connection has written since it opened."""
        assert isinstance(self.db, sqlite_utils.Database)
        return int(self.db.conn.total_changes)

    def mark(self) -> None:
        if not is_postgres(self.db):
            self._mark = self._sqlite_changes()
            return
        with psycopg.connect(self.db.url, autocommit=True) as conn:
            self._counts = {
                table: int(first_row(conn.execute(f'SELECT count(*) FROM "{table}"'))[0])
                for table in self._tables()
            }
            # The next transaction id: every row written from now on has one as high.
            (xid,) = first_row(
                conn.execute(
                    "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint % 4294967296"
                )
            )
            self._mark = int(xid)

    def since_mark(self) -> int:
        if not is_postgres(self.db):
            return self._sqlite_changes() - self._mark
        written = 0
        with psycopg.connect(self.db.url, autocommit=True) as conn:
            for table in self._tables():
                rows, new = first_row(
                    conn.execute(
                        "SELECT count(*), count(*) FILTER (WHERE xmin::text::bigint >= %s)"
                        f' FROM "{table}"',
                        [self._mark],
                    )
                )
                written += new + max(0, self._counts.get(table, 0) - rows)
        return written
