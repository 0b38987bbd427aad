"""The throwaway PostgreSQL server of tests/peers/servers/pg_server.py and its conftest fixtures."""

from __future__ import annotations

import socket

import psycopg
import pytest

from tests.peers.servers.pg_server import PostgresServer

pytestmark = pytest.mark.slow  # starts real PostgreSQL servers


def test_server_answers_select_1(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        assert conn.info.host == "127.0.0.1"
        assert conn.execute("SHOW server_encoding").fetchone() == ("UTF8",)
        assert conn.execute("SHOW fsync").fetchone() == ("off",)
        assert conn.execute("SHOW max_connections").fetchone() == ("200",)


@pytest.mark.parametrize("run", [1, 2])
def test_each_test_gets_a_fresh_database(postgres_url: str, run: int) -> None:
    # Both runs create the same table: the second would fail on a shared database.
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ).fetchone() == (0,)
        conn.execute("CREATE TABLE claims (id int PRIMARY KEY)")
        conn.execute("INSERT INTO claims VALUES (%s)", (run,))


def test_two_databases_are_isolated(postgres_server: PostgresServer) -> None:
    first = postgres_server.create_database("isolated_a")
    second = postgres_server.create_database("isolated_b")
    try:
        with psycopg.connect(first) as conn:
            conn.execute("CREATE TABLE only_here (x int)")
        with psycopg.connect(second) as conn:
            found = conn.execute("SELECT to_regclass('only_here')").fetchone()
            assert found == (None,)
    finally:
        postgres_server.drop_database("isolated_a")
        postgres_server.drop_database("isolated_b")


def test_restart_keeps_data_and_accepts_connections(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    port = postgres_server.port
    with psycopg.connect(postgres_url) as conn:
        conn.execute("CREATE TABLE kept (x text)")
        conn.execute("INSERT INTO kept VALUES ('before restart')")
        pid_before = conn.info.backend_pid
    postgres_server.restart()
    assert postgres_server.port == port
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT x FROM kept").fetchall() == [("before restart",)]
        assert conn.info.backend_pid != pid_before


def test_amcheck_extension_can_be_created(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        conn.execute("CREATE EXTENSION amcheck")
        conn.execute("CREATE TABLE t AS SELECT generate_series(1, 1000) AS n")
        conn.execute("CREATE INDEX t_n ON t (n)")
        conn.execute("SELECT bt_index_check('t_n', true)")


def test_failed_start_raises_with_the_log_tail() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = PostgresServer(port=taken.getsockname()[1])
        with pytest.raises(RuntimeError, match="could not bind IPv4 address"):
            server.start()
    assert server.root is None


def test_stop_deletes_the_directory() -> None:
    server = PostgresServer().start()
    root = server.root
    assert root is not None and (root / "data" / "PG_VERSION").exists()
    server.stop()
    assert not root.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(server.url, connect_timeout=2)
