"""Operating the queue: ``zofia queue``, ``/healthz`` and ``/metrics``, JSON logs with the
check id, settings that refuse a broken deployment, and the store's connection surviving
a PostgreSQL restart (a real server, restarted for real)."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import socket
import sys
from pathlib import Path

import aiohttp
import pytest
from click.testing import CliRunner
from croniter import croniter
from prometheus_client import CollectorRegistry, generate_latest

from tests.peers.fakes.fake_checker import FakeChecker, HashingEncoder, submit
from tests.peers.servers.pg_server import PostgresServer

from bots.app.health import serving_health
from bots.app.json_logs import JsonLines, json_lines_beside_workers
from bots.app.runtime import build_service
from bots.app.settings import Settings, load_settings
from bots.cli import main
from bots.service.queue.jobs import cron_every, queue_counts
from bots.service.queue.metrics import watch_queue_depth
from bots.service.queue.worker import CHECK_ID
from bots.service.records import Requester
from storage import MIGRATIONS
from storage.postgres import PostgresDatabase
from storage.sql import first_row
from zofia_engine.errors import ZofiaError
from zofia_engine.post import Post

SECRET = "ops-test-secret-0123456789"


def env_for(url: str) -> dict[str, str]:
    return {"ZOFIA__STORAGE__URL": url, "ZOFIA__STORAGE__SECRET": SECRET}


async def _submit(url: str, texts: list[str]) -> list[str]:
    settings = Settings.model_validate({"storage": {"url": url, "secret": SECRET}})
    service = build_service(settings, FakeChecker(), HashingEncoder())
    await service.start()
    try:
        handles = [
            await submit(service, Post(text=text), Requester("test", f"u{n}", "c"))
            for n, text in enumerate(texts)
        ]
        for handle in handles:
            handle.cancel()  # the requester leaves; the job stays queued for a worker
        return [handle.check_id for handle in handles]
    finally:
        await service.aclose()
        service.store.close()


@pytest.mark.slow  # a real PostgreSQL server
def test_zofia_queue_lists_queued_stalled_and_failed_jobs(postgres_url: str) -> None:
    texts = ["The dam will open on Monday.", "Bread prices doubled.", "The zoo has a new lion."]
    ids = asyncio.run(_submit(postgres_url, texts))
    db = PostgresDatabase(postgres_url)
    # What a SIGKILLed worker leaves behind, and a job out of attempts.
    db.execute(
        "UPDATE procrastinate_jobs SET status = 'doing', worker_id = NULL"
        " WHERE args->>'check_id' = ?",
        [ids[1]],
    )
    db.execute(
        "UPDATE procrastinate_jobs SET status = 'failed' WHERE args->>'check_id' = ?", [ids[2]]
    )
    assert sorted(queue_counts(db)) == [("checks", "doing", 1), ("checks", "todo", 1)]
    db.close()
    result = CliRunner().invoke(main, ["queue"], env=env_for(postgres_url))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "queue: 1 failed, 1 queued, 1 stalled"
    lines = {line.split()[-1]: line.split()[1] for line in result.output.splitlines()[1:]}
    assert lines == {ids[0]: "queued", ids[1]: "stalled", ids[2]: "failed"}


def test_the_queue_commands_need_postgresql() -> None:
    result = CliRunner().invoke(main, ["worker"], env={"ZOFIA__STORAGE__URL": ""})
    assert result.exit_code == 1
    assert "the job queue lives in PostgreSQL" in result.output


@pytest.mark.parametrize(
    ("environ", "says"),
    [
        ({"ZOFIA__STORAGE__URL": "postgresql://db/zofia"}, "storage.secret must be set with"),
        ({"ZOFIA__STORAGE__URL": "mysql://db/zofia"}, "must start with sqlite:/// or postgresql"),
        (
            {"ZOFIA__QUEUE__HEARTBEAT_S": "10", "ZOFIA__QUEUE__STALLED_AFTER_S": "5"},
            "stalled_after_s must exceed",
        ),
    ],
)
def test_settings_refuse_a_broken_deployment(
    environ: dict[str, str], says: str, tmp_path: Path
) -> None:
    with pytest.raises(ZofiaError) as refused:
        load_settings(None, environ={"ZOFIA_CONFIG": "", **environ})
    assert says in str(refused.value)


@pytest.mark.parametrize(("seconds", "gap"), [(0.4, 1), (1, 1), (10, 10), (10.2, 10), (60, 60)])
def test_a_periodic_job_fires_every_so_many_seconds(seconds: float, gap: int) -> None:
    """The periodic jobs (the stalled-job sweep, the look for corrections due) fire every
    ``seconds``, rounded to a whole second, as Procrastinate's cron reads the line."""
    moments = croniter(cron_every(seconds), 1_800_000_000)  # a whole minute
    times = [moments.get_next(float) for _ in range(5)]
    assert {round(later - earlier) for earlier, later in itertools.pairwise(times)} == {gap}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow  # a real PostgreSQL server
async def test_healthz_says_which_probe_failed_and_metrics_are_served(
    postgres_url: str,
) -> None:
    up = {"database": True}

    async def database() -> bool:
        return up["database"]

    async def hangs() -> bool:
        await asyncio.sleep(60)
        return True

    port = _free_port()
    async with (
        serving_health(port, {"database": database}) as served,
        aiohttp.ClientSession() as session,
    ):
        assert served == port
        async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
            assert response.status == 200
            assert await response.json() == {"ok": True, "probes": {"database": True}}
        up["database"] = False
        async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
            assert response.status == 503
            assert (await response.json())["probes"] == {"database": False}
        async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
            assert response.status == 200
            assert "zofia_check_seconds_bucket" in await response.text()
    other = _free_port()
    async with (
        serving_health(other, {"slow": hangs}),
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{other}/healthz") as response,
    ):
        assert response.status == 503  # a hung probe is a "no", within its timeout
    async with serving_health(0, {}) as off:
        assert off == 0


@pytest.mark.slow  # a real PostgreSQL server
async def test_the_queue_depth_gauge_reads_the_database(postgres_url: str) -> None:
    await _submit(postgres_url, ["The harbour closes tonight.", "A comet hits Tuesday."])
    db = PostgresDatabase(postgres_url)
    registry = CollectorRegistry()
    watch_queue_depth(lambda: queue_counts(db), registry)
    text = generate_latest(registry).decode()
    db.close()
    assert 'zofia_queue_depth{queue="checks",status="todo"} 2.0' in text
    # With the database gone, a scrape still answers (no figure, not an error).
    assert "zofia_queue_depth" in generate_latest(registry).decode()


def test_log_lines_are_json_with_the_check_id() -> None:
    record = logging.LogRecord("zofia_engine.x", logging.INFO, __file__, 1, "step %s", ("a",), None)
    token = CHECK_ID.set("Abc123")
    try:
        line = json.loads(JsonLines().format(record))
    finally:
        CHECK_ID.reset(token)
    assert (line["check"], line["msg"], line["level"]) == ("Abc123", "step a", "INFO")
    assert json.loads(JsonLines().format(record))["check"] == ""


@pytest.mark.slow  # a real PostgreSQL server
def test_the_store_reconnects_after_a_server_restart() -> None:
    with PostgresServer() as server:  # its own server: the session's stays up
        db = PostgresDatabase(server.create_database("restarting"))
        db.execute("CREATE TABLE t (x INTEGER)")
        db.execute("INSERT INTO t VALUES (?)", [1])
        server.restart()
        # The first transaction after the restart finds its connection dead and reopens it.
        with db.transaction():
            db.execute("INSERT INTO t VALUES (?)", [2])
        server.restart()
        # So does the first statement outside one.
        assert first_row(db.execute("SELECT sum(x) FROM t"))[0] == 3
        db.close()
        with pytest.raises(Exception, match="closed"):
            db.execute("SELECT 1")


def test_bot_replicas_of_a_queued_deployment_log_json_lines() -> None:
    root = logging.getLogger()
    handler = logging.StreamHandler()
    plain = logging.Formatter("%(message)s")
    handler.setFormatter(plain)
    root.addHandler(handler)
    before = {h: h.formatter for h in root.handlers}
    try:
        assert handler.formatter is plain
        json_lines_beside_workers()
        assert isinstance(handler.formatter, JsonLines)
    finally:
        root.removeHandler(handler)
        for other, formatter in before.items():
            other.setFormatter(formatter)


def test_json_lines_keep_the_token_redacted() -> None:
    from bots.app.telegram import TokenRedactor

    token = "987654:WRONG-secret_token_0123456789abcdef"
    try:
        raise RuntimeError(f"The token `{token}` was rejected.")
    except RuntimeError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", None, sys.exc_info())
    record.stack_info = f"Stack (most recent call last):\n  token={token}"
    assert TokenRedactor(token).filter(record)
    line = JsonLines().format(record)
    assert token not in line and "<token>" in json.loads(line)["exc"]
    assert "<token>" in json.loads(line)["stack"]


@pytest.mark.slow  # a real PostgreSQL server
def test_store_status_on_postgresql_names_the_server_not_the_password(postgres_url: str) -> None:
    from storage.opening import open_store, store_status
    from storage.settings import StorageSettings

    settings = StorageSettings(url=postgres_url.replace("zofia@", "zofia:hunter2@"), secret=SECRET)
    fresh = store_status(settings)
    assert fresh.schema == "(new)" and "m008_deliveries" in fresh.pending
    store, _ = open_store(settings)
    store.close()
    status = store_status(settings)
    assert str(status.path).startswith("PostgreSQL 127.0.0.1:") and "hunter2" not in str(
        status.path
    )
    newest = MIGRATIONS[-1][0]  # the store is opened at the newest migration there is
    assert status.schema == newest and status.pending == ()
