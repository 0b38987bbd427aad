"""What a check shows in chats other than its own (:mod:`storage.other_chats`), on
SQLite and on PostgreSQL: which checks may answer which chat (the rule in SQL and of a
row, held to each other), and what another chat is shown of a report."""

from __future__ import annotations

import itertools

import pytest

from tests.factories import POST, full_report
from tests.peers.fixtures.store_fixtures import Clock

from bots.service.shown import report_of, shown_report
from storage.other_chats import (
    ELSEWHERE,
    as_seen_elsewhere,
    may_answer,
    run_key,
    seen_elsewhere,
    shown_to,
)
from storage.rows import CheckRow
from storage.sql import StoreDatabase
from storage.store import CheckStore
from zofia_engine.post import Post

#: where checks are asked: (platform, keyed chat, in a group or a channel)
PLACES = [
    ("telegram", "group-1", True),
    ("telegram", "private-1", False),
    ("telegram", "private-2", False),
    ("discord", "private-1", False),
    ("api", "key-1", False),
    ("api", "key-2", False),
    ("cli", "terminal", False),
]
#: what the post's text and its images' words are: never shown to another chat
PRIVATE_WORDS = [
    "banned bicycles from every street",  # the core claim, the post's own words
    "Cyclists face a 500 dollar fine",
    "BIKES BANNED",  # read from its image
    "FALSE: no ban exists",  # a label printed on its image
]


@pytest.fixture
def store(db: StoreDatabase, clock: Clock) -> CheckStore:
    return CheckStore(db, clock=clock, secret=b"k" * 32)


def asked(store: CheckStore, platform: str, chat: str, in_group: bool, *, text: str) -> CheckRow:
    row = store.checks.create(
        platform=platform,
        chat=chat,
        requester="user",
        post=Post(text=text),
        text_hash=f"key of {text}",
        in_group=in_group,
    )
    store.reports.save(row.id, full_report())
    stored = store.checks.get(row.id)
    assert stored is not None and stored.in_group == in_group
    return stored


def test_the_rule_in_sql_and_of_a_row_agree_a_group_answers_all_others_their_own(
    store: CheckStore, clock: Clock
) -> None:
    since = clock()
    rows = {place: asked(store, *place, text=f"{POST} {n}") for n, place in enumerate(PLACES)}
    for (checked, row), (platform, chat, _) in itertools.product(rows.items(), PLACES):
        expected = checked[2] or checked[:2] == (platform, chat)
        assert may_answer(row, platform, chat) == expected, (checked, platform, chat)
        found = store.checks.find_exact(row.text_hash, since, platform=platform, chat=chat)
        assert (found is not None) == expected, (checked, platform, chat)
        store.checks.set_status(row.id, "running")
        flying = store.checks.in_flight(row.text_hash, platform=platform, chat=chat)
        assert (flying is not None) == expected, (checked, platform, chat)
        store.checks.set_status(row.id, "done")


def test_a_text_checked_in_a_private_chat_and_in_a_group_answers_others_from_the_group(
    store: CheckStore, clock: Clock
) -> None:
    since = clock()
    group = asked(store, "telegram", "group-1", True, text=POST)
    clock.advance(minutes=1)
    private = asked(store, "telegram", "private-1", False, text=POST)  # newer
    found = store.checks.find_exact(group.text_hash, since, platform="api", chat="key-1")
    assert found == group
    found = store.checks.find_exact(group.text_hash, since, platform="telegram", chat="private-1")
    assert found == private  # its own chat's, the newest
    # A private chat's run is keyed within its chat: another chat's waits on none of its.
    assert run_key(group) == group.text_hash != run_key(private)


def test_another_chat_sees_the_verdict_summary_and_evidence_and_nothing_of_the_post() -> None:
    report = full_report("false")
    assert all(words in report.model_dump_json() for words in PRIVATE_WORDS)
    seen = as_seen_elsewhere(report)
    shown = seen.model_dump_json()
    assert [words for words in PRIVATE_WORDS if words in shown] == []
    assert (seen.verdict, seen.summary, seen.confidence) == (
        report.verdict,
        report.summary,
        report.confidence,
    )
    assert seen.evidence == [item for item in report.evidence if item.source != "image"]
    assert seen.images == [] and seen.debate.turns == [] and seen.usage.log == []
    assert seen.keywords == [] and seen.tree is None
    assert [note.names for note in seen.notes] == [[ELSEWHERE]]  # why the rest is not there
    assert seen_elsewhere(seen) and not seen_elsewhere(report)
    assert seen.analyses.linguist == [] and seen.analyses.expert is None
    # The sources' words its claims were read against stay, by label, without the claim.
    assert [(c.id, c.label, c.quotes, c.text) for c in seen.claims] == [
        (c.id, c.label, c.quotes, "") for c in report.claims if c.quotes
    ]
    assert seen.triage is not None and (seen.triage.kind, seen.triage.reason) == ("claim", "")


def test_a_repeat_from_another_chat_reads_the_report_as_seen_there(
    store: CheckStore, clock: Clock
) -> None:
    group = asked(store, "telegram", "group-1", True, text=POST)
    elsewhere = store.checks.create(
        platform="api",
        chat="key-1",
        requester="asker",
        post=Post(text=POST),
        text_hash=group.text_hash,
        status="done",
        repeat_of=group.id,
        repeat_kind="exact",
    )
    own = report_of(store, group.id)
    assert own is not None and own[1] == full_report()  # its own chat sees it whole
    for in_its_chat in (True, False):  # in the chat, and on the report page
        found = report_of(store, elsewhere.id, in_its_chat=in_its_chat)
        assert found is not None and found[1] == as_seen_elsewhere(full_report())
    assert shown_report(store, group.id, ("api", "key-1")) == as_seen_elsewhere(full_report())
    assert shown_report(store, group.id) == full_report()  # the operator's view
    assert shown_to(elsewhere, group, full_report()) == as_seen_elsewhere(full_report())
    assert shown_to(group, group, full_report()) == full_report()
