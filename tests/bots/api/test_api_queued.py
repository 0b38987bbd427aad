"""The HTTP API of a queued deployment (PostgreSQL and workers): it only enqueues. In
process, with a Procrastinate worker beside it; and ``zofia api`` as a process of its
own, started and stopped as an operator would. The checker is
:class:`~tests.peers.fakes.fake_checker.FakeChecker` (our ``Checker`` port), as in ``test_api``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from pathlib import Path

import aiohttp
import pytest

from tests.bots.api.test_api import POST, SECRET, running_api
from tests.bots.service.queue.test_queue import settings_for, worker
from tests.bots.service.queue.test_queue_processes import ZOFIA, free_port
from tests.peers.fakes.fake_checker import FakeChecker

from bots.api.openapi import OPENAPI_PATH
from bots.app.settings import Settings
from bots.service.queue.jobs import CHECK_TASK, CORRECT_DUE_TASK, RETRY_STALLED_TASK
from storage.api_keys import ApiKeys
from storage.opening import open_store
from storage.sql import StoreDatabase, first_row

pytestmark = pytest.mark.slow  # a real PostgreSQL server


def queued_jobs(db: StoreDatabase) -> list[tuple[str, str | None]]:
    """The jobs waiting in the queue (task, check), but for the periodic looks of the
    corrections the API server takes for its webhooks (as a bot's), which a tick of
    their clock may add at any time: a check's job for a worker, never an engine run."""
    jobs = db.execute("SELECT task_name, args->>'check_id' FROM procrastinate_jobs").fetchall()
    periodic = (RETRY_STALLED_TASK, CORRECT_DUE_TASK)
    return [(job[0], job[1]) for job in jobs if job[0] not in periodic]


async def test_on_the_queued_deployment_the_api_only_enqueues(postgres_url: str) -> None:
    settings = settings_for(postgres_url)
    checker = FakeChecker()
    async with running_api(settings, checker) as api:
        status, body, _ = await api.call("POST", "/v1/checks", json={"text": POST})
        assert status == 202, body
        assert queued_jobs(api.service.store.db) == [(CHECK_TASK, body["id"])]
        await asyncio.sleep(0.5)
        _, state, _ = await api.call("GET", body["poll"])
        assert state["status"] == "queued" and checker.runs == []  # no engine here
        async with worker(settings, checker):
            done = await api.answered(body["poll"])
        assert done["status"] == "done" and done["vote"]["truth_score"] == 1
        assert len(checker.runs) == 1  # the worker's
        deliveries = api.service.store.db.execute("SELECT count(*) FROM deliveries")
        assert first_row(deliveries)[0] == 0  # no card to post anywhere


async def test_zofia_api_serves_until_sigterm_and_only_enqueues(
    postgres_url: str, tmp_path: Path
) -> None:
    port = free_port()
    env = {**os.environ, "ZOFIA__STORAGE__URL": postgres_url, "ZOFIA__STORAGE__SECRET": SECRET}
    env.pop("ZOFIA_CONFIG", None)
    store, secret = open_store(
        Settings.model_validate({"storage": {"url": postgres_url, "secret": SECRET}}).storage
    )
    key = ApiKeys(store.database, secret).add("tipline")
    log = (tmp_path / "api.log").open("w")
    process = subprocess.Popen(
        [*ZOFIA, "api", "--port", str(port)], env=env, cwd=tmp_path, stdout=log, stderr=log
    )
    try:
        async with aiohttp.ClientSession() as http:
            url = f"http://127.0.0.1:{port}"
            async with asyncio.timeout(120):
                while True:
                    with contextlib.suppress(aiohttp.ClientConnectionError):
                        async with http.get(url + OPENAPI_PATH) as response:
                            if response.status == 200:
                                break
                    assert process.poll() is None, (tmp_path / "api.log").read_text()
                    await asyncio.sleep(0.2)
            headers = {"Authorization": f"Bearer {key}"}
            async with http.post(url + "/v1/checks", json={"text": POST}, headers=headers) as r:
                assert r.status == 202, await r.text()
                check_id = (await r.json())["id"]
        assert queued_jobs(store.db) == [(CHECK_TASK, check_id)]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0, (tmp_path / "api.log").read_text()
        row = store.checks.get(check_id)
        assert row is not None and row.status == "queued"  # left to the workers
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        log.close()
        store.close()
