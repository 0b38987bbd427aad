"""The store's test fixtures, shared as a pytest plugin (``pytest_plugins``): a settable
clock and a new, migrated store database on each engine (SQLite, and PostgreSQL in the
slow tier)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from storage.database import open_database
from storage.opening import open_postgres
from storage.sql import StoreDatabase

__all__ = ["T0", "Clock", "clock", "db"]

T0 = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


class Clock:
    """A settable clock for the store."""

    def __init__(self, now: dt.datetime = T0) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta: float) -> dt.datetime:
        self.now += dt.timedelta(**delta)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreDatabase]:
    """A new, migrated store database: an SQLite file, or a fresh PostgreSQL database."""
    if request.param == "postgresql":
        database: StoreDatabase = open_postgres(request.getfixturevalue("postgres_url"))
    else:
        database = open_database(tmp_path / "zofia.db")
    yield database
    database.close()
