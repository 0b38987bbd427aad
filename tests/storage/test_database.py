"""The database under the store on both engines: times stored as UTC, reads waiting
for SQLite's lock (and never for a lost PostgreSQL connection), threads sharing one
store."""

from __future__ import annotations

import datetime as dt
import threading
import time

import psycopg
import pytest
from psycopg import sql

from tests.peers.fixtures.store_fixtures import T0
from tests.peers.servers.pg_server import PostgresServer
from tests.storage.stored import make_report, new_check

import storage.postgres as postgres_module
from storage import CheckRow, CheckStore, RequestScope
from storage.opening import open_postgres
from storage.postgres import StoreDatabase, is_postgres
from storage.sql import first_row


def test_times_are_stored_as_utc(db: StoreDatabase) -> None:
    kyiv = dt.timezone(dt.timedelta(hours=2))
    store = CheckStore(db, clock=lambda: dt.datetime(2026, 3, 1, 14, 0, tzinfo=kyiv))
    row = new_check(store)
    assert row.created_at == T0 and row.created_at.tzinfo == dt.UTC
    raw = first_row(db.execute("SELECT created_at FROM checks"))[0]
    assert raw == "2026-03-01T12:00:00.000000+00:00"
    naive = CheckStore(db, clock=lambda: dt.datetime(2026, 3, 1))
    with pytest.raises(ValueError, match="naive"):
        new_check(naive)


def test_reads_wait_for_the_stores_lock_on_sqlite_only(
    store: CheckStore, db: StoreDatabase
) -> None:
    """One SQLite connection is never used by two threads at once; PostgreSQL's connection
    runs one statement at a time by itself, and its reads do not wait for the lock."""
    row = new_check(store)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.database.lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    found: list[CheckRow | None] = []
    reader = threading.Thread(target=lambda: found.append(store.checks.get(row.id)))
    reader.start()
    reader.join(0.5)
    waited = reader.is_alive()
    release.set()
    reader.join(10)
    holder.join(10)
    assert waited is not is_postgres(db)
    assert found == [row]


@pytest.mark.slow
def test_a_read_waiting_for_a_lost_postgres_connection_keeps_no_one_waiting(
    postgres_server: PostgresServer, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = open_postgres(postgres_url)
    store = CheckStore(db)
    row = new_check(store)
    monkeypatch.setattr(postgres_module, "RECONNECT_S", 20.0)
    name = sql.Identifier(postgres_url.rpartition("/")[2])
    with psycopg.connect(postgres_server.url, autocommit=True) as admin:  # turns away new ones
        admin.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS false").format(name))
    db.current().close()  # the connection is lost; the server does not let it back yet
    failed: list[BaseException] = []

    def read() -> None:
        try:
            store.checks.get(row.id)
        except BaseException as exc:
            failed.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.3)  # the reader waits for the server to come back
    assert reader.is_alive()
    # Meanwhile the store's lock is free, and the store closes at once ...
    assert store.database.lock.acquire(timeout=1)
    store.database.lock.release()
    store.close()
    # ... and the waiting read gives up, instead of using a closed store: it fails as a
    # closed connection fails (InterfaceError), not as a reconnection that timed out
    # (OperationalError), which a close waiting for the reader would have meant.
    reader.join(5)
    assert not reader.is_alive()
    assert [type(exc) for exc in failed] == [psycopg.InterfaceError]


def test_threads_share_one_store(db: StoreDatabase) -> None:
    store = CheckStore(db)

    def work(n: int) -> None:
        for i in range(20):
            row = new_check(store, f"post {n} {i}")
            store.reports.save(row.id, make_report())

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.checks.count(RequestScope(T0 - dt.timedelta(days=3650))) == 80
    assert len(list(store.reports.export())) == 80 and store.integrity_ok()
