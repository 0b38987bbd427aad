"""Not a bench script: helpers of ``bench/abuse.py`` (``bench/lib/`` holds such): the
store each round runs on, fresh every round, and the RSS sampled meanwhile.

On SQLite a temporary file, the checks run in the bot's process. On PostgreSQL a
fresh database on one throwaway server (tests/peers/servers/pg_server.py, started once), with
``zofia worker`` processes (:mod:`lib.zofia_workers`) taking its checks, as the queued
mode runs them (docs/deployment.md): each worker reads the store's URL, the secret
and the fake OpenAI server's URL from the environment, and is ready (its models
loaded) before the round sends anything; the bot takes the deliver jobs itself
(``running_bot``). After the round the workers stop and the database is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

# The repository is on sys.path (for the tests package): bench/abuse.py puts it there first.
from lib.zofia_workers import Workers, worker_env

from tests.peers.servers.pg_server import PostgresServer

SECRET = "bench-secret-012345"
API_KEY = "sk-bench"
BACKENDS = ("sqlite", "postgresql")


@dataclass
class RoundStore:
    """One round's store: the ``[storage]`` settings, and the workers' process ids
    (none on SQLite)."""

    storage: dict[str, str]
    worker_pids: list[int] = field(default_factory=list)


class Backend:
    """The stores of a run's rounds; on PostgreSQL the server lives as long as this."""

    def __init__(self, name: str, workers: int, concurrency: int, ready_s: float) -> None:
        if name not in BACKENDS:
            raise ValueError(f"backend: {name!r}")
        self.name, self.workers, self.concurrency = name, workers, concurrency
        self.ready_s = ready_s
        self.server: PostgresServer | None = None
        self.rounds = 0

    def __enter__(self) -> Backend:
        if self.name == "postgresql":
            self.server = PostgresServer().start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    @contextlib.asynccontextmanager
    async def round_store(self, llm_url: str) -> AsyncIterator[RoundStore]:
        """A fresh store for one round (on PostgreSQL with its workers ready)."""
        self.rounds += 1
        with tempfile.TemporaryDirectory(prefix="zofia-abuse-") as tmp:
            if self.server is None:
                yield RoundStore({"path": str(Path(tmp) / "b.db"), "secret": SECRET})
                return
            name = f"bench_abuse_{self.rounds}"
            url = await asyncio.to_thread(self.server.create_database, name)
            workers = Workers(worker_env(url, SECRET, llm_url, API_KEY), Path(tmp))
            try:
                workers.start(self.workers, self.concurrency)
                await workers.ready(self.ready_s)
                yield RoundStore({"url": url, "secret": SECRET}, [p.pid for p in workers.procs])
            finally:
                await asyncio.to_thread(workers.stop)
                await asyncio.to_thread(self.server.drop_database, name)


def tree_rss_mb(pids: Iterable[int]) -> float:
    """The RSS of ``pids`` and their children, in MB (processes gone count nothing)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            process = psutil.Process(pid)
            for one in [process, *process.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    total += one.memory_info().rss
    return total / 2**20


class RssPeaks:
    """The bot's process (this one: the bot, the fake servers) and, apart, the workers:
    each one's RSS once the bot is up, and its peak since."""

    def __init__(self, worker_pids: list[int]) -> None:
        self.own = psutil.Process()
        self.worker_pids = worker_pids
        self.idle_mb = self.peak_mb = self.own.memory_info().rss / 2**20
        self.workers_idle_mb = self.workers_peak_mb = tree_rss_mb(worker_pids)

    def sample(self) -> None:
        self.peak_mb = max(self.peak_mb, self.own.memory_info().rss / 2**20)
        if self.worker_pids:
            self.workers_peak_mb = max(self.workers_peak_mb, tree_rss_mb(self.worker_pids))

    def figures(self) -> dict[str, Any]:
        return {
            "rss_over_idle_mb": round(self.peak_mb - self.idle_mb),
            "workers_rss_over_idle_mb": (
                round(self.workers_peak_mb - self.workers_idle_mb) if self.worker_pids else None
            ),
        }
