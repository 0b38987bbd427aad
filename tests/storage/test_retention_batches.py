"""The retention purge stays small: it touches only what still holds something to purge,
in batches each in a transaction of its own, on SQLite and on a real PostgreSQL server.

"Rows touched" is counted by the engine itself: SQLite's ``total_changes`` (every row
inserted, updated or deleted on the connection, an update to the same values
included), and on PostgreSQL the rows whose version (``ctid``, ``xmin``) changed or
went away (an update writes a new version even when nothing differs).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import pytest

from tests.factories import full_report
from tests.peers.fixtures.store_fixtures import Clock

from storage.keys import text_hash
from storage.postgres import StoreDatabase, is_postgres
from storage.retention import purge_content
from storage.store import CheckStore
from zofia_engine.post import Post

RETENTION = dt.timedelta(days=30)


@pytest.fixture
def store(db: StoreDatabase, clock: Clock) -> CheckStore:
    return CheckStore(db, clock=clock, secret=b"k" * 32)


def _versions(db: StoreDatabase) -> set[tuple[str, str, str]]:
    found = set()
    for table in db.table_names():
        for ctid, xmin in db.execute(f'SELECT ctid::text, xmin::text FROM "{table}"').fetchall():
            found.add((table, ctid, xmin))
    return found


def rows_touched(store: CheckStore, action: Callable[[], Any]) -> int:
    """Run ``action``; how many rows of the store it inserted, updated or deleted."""
    db = store.db
    if is_postgres(db):
        before = _versions(db)
        action()
        return len(before - _versions(db))
    conn = db.conn  # type: ignore[attr-defined]
    changes = int(conn.total_changes)
    action()
    return int(conn.total_changes) - changes


def old_checks(store: CheckStore, clock: Clock, count: int) -> list[str]:
    """``count`` checks with everything a check can hold: a report (evidence, claims,
    debate), a vector, a vote with a comment, a section mark and a delivery; and a chat
    setting in a chat that then stays quiet. The clock then moves past the retention."""
    ids = []
    for n in range(count):
        text = f"Post number {n} says the river bridge closes in 2027."
        row = store.checks.create(
            platform="telegram",
            chat=f"chat-{n}",
            requester="u-hash",
            post=Post(text=text, url="https://t.me/c/1", origin="user Someone (@someone)"),
            text_hash=text_hash(text),
        )
        store.reports.save(row.id, full_report(), vector=np.ones(8, dtype=np.float32))
        store.feedback.add(row.id, "voter", 1, "a comment that restates the post")
        store.marks.set(row.id, "debate", [101, 102])
        store.deliveries.expect(row.id, "telegram", {"chat_id": 1, "message_id": 2})
        store.chats.set("telegram", f"chat-{n}", "language", "French")
        ids.append(row.id)
    clock.now += RETENTION + dt.timedelta(days=1)
    return ids


def test_a_second_purge_rewrites_nothing(store: CheckStore, clock: Clock) -> None:
    old_checks(store, clock, 3)
    cutoff = clock.now - RETENTION
    first = rows_touched(store, lambda: store.purge(older_than=cutoff))
    assert first > 3 * 5  # checks, reports, claims, evidence, vectors, marks …
    purged: list[int] = []
    again = rows_touched(store, lambda: purged.append(store.purge(older_than=cutoff)))
    assert (purged, again) == ([0], 0)
    # The next day, still nothing; a comment added since to a purged check is the one
    # row the purge after it writes.
    clock.now += dt.timedelta(days=1)
    assert rows_touched(store, lambda: store.purge(older_than=clock.now - RETENTION)) == 0
    [row] = store.db.execute("SELECT id FROM checks ORDER BY id LIMIT 1").fetchall()
    store.feedback.add(row[0], "late-voter", -1, "the post, quoted again")
    purged.clear()
    late = rows_touched(store, lambda: purged.append(store.purge(older_than=cutoff)))
    assert (purged, late) == ([1], 1)


def test_the_purge_goes_in_batches_each_in_its_own_transaction(
    store: CheckStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = old_checks(store, clock, 5)
    recent = store.checks.create(
        platform="telegram",
        chat="chat-0",
        requester="u-hash",
        post=Post(text="A recent post about the moon."),
        text_hash=text_hash("A recent post about the moon."),
    )
    transactions = 0
    write = store.database.write

    def counted() -> AbstractContextManager[None]:
        nonlocal transactions
        transactions += 1
        return write()

    monkeypatch.setattr(store.database, "write", counted)
    assert purge_content(store.database, clock.now - RETENTION, batch=2) == 5
    # Three batches of checks (2, 2, 1), then the quiet chats' settings (4 of 5: chat-0
    # has a recent check), two at a time.
    assert transactions == 3 + 3
    for check_id in ids:
        row = store.checks.get(check_id)
        assert row is not None and row.post_text is None and row.text_hash == ""
        assert store.reports.get(check_id) is None
    assert store.checks.get(recent.id).post_text is not None  # type: ignore[union-attr]
    left = store.db.execute("SELECT chat FROM chat_settings ORDER BY chat").fetchall()
    assert [chat for (chat,) in left] == ["chat-0"]
    transactions = 0
    assert purge_content(store.database, clock.now - RETENTION, batch=2) == 0
    assert transactions == 1  # the quiet chats' look, which finds none
