"""``store.seen_messages`` on each engine: a message is taken once, by one caller of
many at once, per platform, and forgotten after its time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.peers.fixtures.store_fixtures import Clock

from storage.seen_messages import SEEN_FOR
from storage.store import CheckStore


def test_a_message_is_taken_once_per_platform(store: CheckStore) -> None:
    seen = store.seen_messages
    assert seen.first("whatsapp", "a" * 64)
    assert not seen.first("whatsapp", "a" * 64)
    assert seen.first("telegram", "a" * 64)  # another platform's message
    assert seen.first("whatsapp", "b" * 64)


def test_of_callers_at_once_exactly_one_takes_a_message(store: CheckStore) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        taken = list(pool.map(lambda _: store.seen_messages.first("whatsapp", "m"), range(8)))
    assert taken.count(True) == 1


def test_a_message_is_forgotten_only_after_its_time(store: CheckStore, clock: Clock) -> None:
    seen = store.seen_messages
    seen.first("whatsapp", "old")
    clock.advance(days=SEEN_FOR.days - 1)
    seen.first("whatsapp", "newer")
    assert seen.forget(before=clock() - SEEN_FOR) == 0
    clock.advance(days=2)
    assert seen.forget(before=clock() - SEEN_FOR) == 1
    assert seen.first("whatsapp", "old") and not seen.first("whatsapp", "newer")
