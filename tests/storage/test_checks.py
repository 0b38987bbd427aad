"""The checks table on both engines: exact repeats in their window, unfinished checks and
history, and the export (hashes only)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.peers.fixtures.store_fixtures import T0, Clock
from tests.storage.stored import HERE, POST, done_check, dump, make_report, new_check

from storage import CheckStore, hash_user, text_hash
from storage.postgres import StoreDatabase


def test_find_exact_returns_the_newest_original_in_the_window(
    store: CheckStore, clock: Clock
) -> None:
    digest = text_hash(POST)
    first = done_check(store)
    clock.advance(hours=1)
    repeat = new_check(store, status="done", repeat_of=first.id, repeat_kind="exact")
    store.reports.save(repeat.id, make_report())  # even with a report, a repeat is no original
    new_check(store)  # queued, not an answer yet
    assert store.checks.find_exact(digest, since=T0, **HERE) == store.checks.get(first.id)
    assert store.checks.find_exact(digest, since=T0 + dt.timedelta(minutes=1), **HERE) is None
    assert store.checks.find_exact(text_hash("another post"), since=T0, **HERE) is None
    clock.advance(hours=1)
    second = done_check(
        store, "  the MAYOR of springfield said the river bridge will close for all of 2027.  "
    )
    assert store.checks.find_exact(digest, since=T0, **HERE) == store.checks.get(second.id)
    store.purge(older_than=clock.advance(seconds=1))
    assert store.checks.find_exact(digest, since=T0, **HERE) is None
    with pytest.raises(ValueError, match="naive"):
        store.checks.find_exact(digest, since=dt.datetime(2026, 1, 1), **HERE)


def test_unfinished_and_history(store: CheckStore, clock: Clock) -> None:
    a = new_check(store)
    clock.advance(seconds=1)
    b = done_check(store, "b", platform="discord", chat="g1")
    clock.advance(seconds=1)
    c = new_check(store, "c")
    store.checks.set_status(c.id, "running")
    clock.advance(seconds=1)
    d = new_check(store, "d", chat="chat-2")
    store.checks.set_status(d.id, "cancelled")
    assert [row.id for row in store.checks.unfinished()] == [a.id, c.id]
    history = store.checks.history()
    assert [(row.id, verdict) for row, verdict in history] == [
        (d.id, None),
        (c.id, None),
        (b.id, "true"),
        (a.id, None),
    ]
    assert [row.id for row, _ in store.checks.history(limit=2)] == [d.id, c.id]
    assert [row.id for row, _ in store.checks.history(platform="discord")] == [b.id]
    assert [row.id for row, _ in store.checks.history(platform="telegram", chat="chat-1")] == [
        c.id,
        a.id,
    ]


def test_export_has_done_checks_with_hashes_only(store: CheckStore, db: StoreDatabase) -> None:
    secret = b"s" * 32
    who = hash_user(secret, "telegram", "123456789")
    kept = done_check(store, requester=who)
    new_check(store, "still queued", requester=who)
    old = done_check(store, "old one", requester=who)
    store.purge(older_than=T0 + dt.timedelta(seconds=1))  # both were made at T0
    rows = list(store.reports.export())
    assert [row["id"] for row in rows] == [kept.id, old.id]
    assert rows[0]["requester"] == who and rows[0]["verdict"] == "true"
    assert rows[0]["confidence"] == 0.82 and rows[0]["report"] is None  # purged
    assert set(rows[0]) == {
        "id", "platform", "chat", "requester", "created_at", "repeat_of", "repeat_kind",
        "verdict", "confidence", "report",
    }  # fmt: skip
    fresh = done_check(store, "fresh", requester=who)
    exported = {row["id"]: row for row in store.reports.export()}
    assert exported[fresh.id]["report"] == make_report().model_dump(mode="json")
    assert "123456789" not in repr(exported) and "123456789" not in dump(db)
