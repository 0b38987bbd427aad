"""The ``store`` fixture of the store's tests: a :class:`CheckStore` on each engine's
``db``, on the test's settable clock."""

from __future__ import annotations

import pytest

from tests.peers.fixtures.store_fixtures import Clock

from storage.sql import StoreDatabase
from storage.store import CheckStore


@pytest.fixture
def store(db: StoreDatabase, clock: Clock) -> CheckStore:
    return CheckStore(db, clock=clock)
