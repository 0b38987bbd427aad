"""``store.heard`` on each engine: what was heard in a check's voice note, kept with the
check (never without one), read back as it was kept, and purged with the post's text."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.peers.fixtures.store_fixtures import Clock
from tests.storage.stored import new_check

from storage.errors import CheckNotFoundError
from storage.heard_notes import HeardNote
from storage.store import CheckStore
from zofia_engine.records.audio import Transcript

HEARD = Transcript(
    sha256="ab" * 32,
    bytes=11_204,
    format="ogg",
    duration_s=5.3,
    text="The mayor of Springfield signed a law banning cars on Sundays.",
    language="en",
    transcriber="openai:whisper-1",
    ms=812.0,
)


def test_what_was_heard_is_kept_with_its_check_and_read_back(store: CheckStore) -> None:
    row, other = new_check(store), new_check(store, "Another post.")
    store.heard.keep(row.id, HeardNote(HEARD, caption=False))
    assert store.heard.get(row.id) == HeardNote(HEARD, caption=False)
    assert store.heard.get(other.id) is None
    with pytest.raises(CheckNotFoundError):
        store.heard.keep("no-such-check", HeardNote(HEARD, caption=True))


def test_the_purge_takes_what_was_heard_with_the_text(store: CheckStore, clock: Clock) -> None:
    row = new_check(store)
    store.heard.keep(row.id, HeardNote(HEARD, caption=True))
    clock.advance(days=31)
    assert store.purge(older_than=clock.now - dt.timedelta(days=30)) == 1
    assert store.heard.get(row.id) is None
    assert store.purge(older_than=clock.now - dt.timedelta(days=30)) == 0
