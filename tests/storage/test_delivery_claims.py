"""A delivery's claim is its replica's while the row holds it: once a lapsed lease is
taken over by another replica, the first can neither end nor release the delivery (the
store on SQLite and on PostgreSQL, with a settable clock)."""

from __future__ import annotations

import datetime as dt

from tests.factories import full_report, stored_check
from tests.peers.fixtures.store_fixtures import Clock

from storage.deliveries import Deliveries
from storage.sql import StoreDatabase
from storage.store import CheckStore


def test_a_claim_taken_over_after_its_lease_is_no_longer_the_first_replica_s(
    db: StoreDatabase, clock: Clock
) -> None:
    store = CheckStore(db, clock=clock, secret=b"k" * 32)
    check = stored_check(store, full_report("false"))
    deliveries = Deliveries(store.database, store.deliveries.sealer, lease=dt.timedelta(seconds=60))
    deliveries.expect(check.id, "telegram", {"chat_id": 5, "message_id": 9})
    first = deliveries.claim(check.id)
    assert first is not None and deliveries.claim(check.id) is None  # its lease runs
    clock.advance(seconds=61)  # the first replica stalled past its lease
    second = deliveries.claim(check.id)
    assert second is not None and second.claimed_at != first.claimed_at
    assert not deliveries.release(first)  # the stale replica cannot free the other's claim
    assert not deliveries.delivered(first)  # nor end it
    assert deliveries.is_claimed(check.id)
    assert deliveries.delivered(second)
    assert deliveries.pending([check.id]) == []
    assert not deliveries.release(second)  # delivered: nothing left to release
