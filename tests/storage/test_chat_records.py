"""What the store keeps for chats and limits, on both engines: votes, chat settings,
section claims, request counts and the day's charges (one read each)."""

from __future__ import annotations

import datetime as dt
import threading

import pytest

from tests.peers.fixtures.store_fixtures import T0, Clock
from tests.storage.stored import done_check, new_check

from storage import CheckNotFoundError, CheckStore, RequestScope
from storage.postgres import is_postgres
from storage.rows import to_iso


def test_a_second_vote_replaces_the_first(store: CheckStore) -> None:
    row = done_check(store)
    store.feedback.add(row.id, "alice", 1)
    store.feedback.add(row.id, "bob", 1, "right")
    assert store.feedback.counts(row.id) == (2, 0)
    store.feedback.add(row.id, "alice", -1, "changed my mind")
    assert store.feedback.counts(row.id) == (1, 1)
    assert store.feedback.counts("other") == (0, 0)
    with pytest.raises(ValueError):
        store.feedback.add(row.id, "carol", 0)
    with pytest.raises(CheckNotFoundError):
        store.feedback.add("nope", "carol", 1)


def test_chat_settings_are_json_per_chat(store: CheckStore) -> None:
    assert store.chats.get("telegram", "1", "lang", "en") == "en"
    store.chats.set("telegram", "1", "lang", "uk")
    store.chats.set("telegram", "1", "limits", {"daily": 10, "roles": ["a", "ж"]})
    store.chats.set("telegram", "1", "lang", "pl")
    assert store.chats.get("telegram", "1", "lang") == "pl"
    assert store.chats.get("telegram", "1", "limits") == {"daily": 10, "roles": ["a", "ж"]}
    assert store.chats.get("telegram", "2", "lang") is None
    assert store.chats.get("discord", "1", "lang", "en") == "en"
    with pytest.raises(TypeError):
        store.chats.set("telegram", "1", "bad", object())


def test_a_section_is_claimed_once_until_its_claim_is_cleared(store: CheckStore) -> None:
    """The key of ``section_marks`` decides who posts a section: of many claims at once
    (threads here; replicas in tests/bots/telegram/test_telegram_queued.py), one wins."""
    row = done_check(store)
    won: list[bool] = []

    def claim(n: int) -> None:
        won.append(store.marks.claim(row.id, "debate", [n]))

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(won) == [False] * 7 + [True]
    claimed = store.marks.get(row.id, "debate")  # the winner's, untouched by the others
    assert isinstance(claimed, list) and len(claimed) == 1
    store.marks.set(row.id, "debate", [101, 102])  # posted: where
    assert not store.marks.claim(row.id, "debate", [])
    assert store.marks.get(row.id, "debate") == [101, 102]
    store.marks.set(row.id, "debate", None)  # the posting failed: a later tap tries again
    assert store.marks.claim(row.id, "debate", [])
    assert store.marks.claim(row.id, "claims", [])  # each section its own
    with pytest.raises(CheckNotFoundError):
        store.marks.claim("nope", "debate", [])


def test_request_counts_and_the_oldest_in_a_window(store: CheckStore, clock: Clock) -> None:
    new_check(store, requester="alice")
    clock.advance(seconds=30)
    new_check(store, requester="alice", chat="chat-2")
    new_check(store, requester="bob")
    clock.advance(seconds=30)
    done_check(store, requester="alice", platform="discord")
    minute_ago = clock.now - dt.timedelta(seconds=45)
    assert store.checks.count(RequestScope(T0)) == 4
    assert store.checks.count(RequestScope(T0, "alice")) == 3
    assert store.checks.count(RequestScope(minute_ago, "alice")) == 2
    assert store.checks.count(RequestScope(T0, platform="telegram", chat="chat-1")) == 2
    assert store.checks.count(RequestScope(T0, platform="discord")) == 1
    assert store.checks.oldest(RequestScope(minute_ago, "alice")) == T0 + dt.timedelta(seconds=30)
    assert store.checks.oldest(RequestScope(clock.advance(seconds=1))) is None


def test_the_days_charges_and_the_pending_runs_in_one_read_each(
    store: CheckStore, clock: Clock
) -> None:
    new_check(store, requester="alice", tokens=1000)  # before the window, still pending
    since = clock.advance(seconds=30)
    first = new_check(store, requester="alice", tokens=1000)
    other_chat = new_check(store, requester="alice", chat="chat-2", tokens=300)
    running = new_check(store, requester="bob", tokens=200)
    new_check(store, requester="bob", platform="discord", tokens=50)  # another platform's chat-1
    new_check(store, requester="carol", chat="chat-2")  # no charge
    new_check(store, requester="alice", repeat_of=first.id, repeat_kind="exact")  # a repeat
    scope = {"requester": "alice", "platform": "telegram", "chat": "chat-1"}
    each = (
        store.checks.tokens_since(since),
        store.checks.tokens_since(since, requester="alice"),
        store.checks.tokens_since(since, platform="telegram", chat="chat-1"),
    )
    assert store.checks.day_charges(since, **scope) == each == (1550, 1300, 1200)
    nobody = {"requester": "dave", "platform": "telegram", "chat": "chat-9"}
    assert store.checks.day_charges(since, **nobody) == (1550, 0, 0)
    assert store.checks.pending_of(**scope) == (3, 3)
    store.checks.set_status(first.id, "done")
    store.checks.set_status(other_chat.id, "failed")
    store.checks.set_status(running.id, "running")
    assert store.checks.pending_of(**scope) == (1, 2)
    assert store.checks.pending_of(**nobody) == (0, 0)
    if not is_postgres(store.db):  # the day's window is read by its index, not a scan
        plan = store.db.execute(
            "EXPLAIN QUERY PLAN SELECT sum(c.tokens) FROM checks c WHERE c.created_at >= ?",
            [to_iso(since)],
        ).fetchall()
        assert "idx_checks_created" in plan[0][-1]
