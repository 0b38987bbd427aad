"""Checks on 1, 2, 4 ``zofia worker`` processes: how throughput scales with workers.

A temporary PostgreSQL server (tests/peers/servers/pg_server.py) holds the store and the job queue;
the fake OpenAI server answers every LLM call after a fixed delay (``--llm-delay-s``),
so Stage 2 is waiting, not computing; Stage 1 is real (spaCy NER, MiniLM, the offline
Wikipedia) inside each worker. For each worker count (a fresh database each time) the
script starts that many ``zofia worker --concurrency C`` processes, waits until each
prints ``worker ready``, submits ``--checks`` distinct posts at once through the real
check service with its :class:`QueuedDelivery` (the submitter's ``FakeChecker`` only
reads images; the engine runs in the workers), asks for each card's delivery, and
takes the ``deliver`` jobs in this process as a bot replica would. Then it stops the
workers (SIGTERM, a bounded wait, then SIGKILL).

Measured per worker count:

* ``checks_per_min``: completed checks / the wall time from the first submit to the
  last result, times 60.
* ``enqueue_to_start_p50_ms``/``p95``: ``checks.created_at`` to ``started_at`` (the
  worker marks a check running as it takes the job; Procrastinate's own events are
  deleted with the job once it succeeds).
  With ``--checks`` submitted at once this is mostly waiting for a free slot; so
* ``pickup_p50_ms``/``p95``: the same, for ``--probes`` checks submitted one at a time
  after the batch, each when the previous one is done (a slot is free): how long a job
  takes to reach an idle worker (NOTIFY, fetch, the running mark).
* ``delivery_p50_ms``/``p95``: the card posted minus the moment the handle resolved.
  It includes ``queue.deliver_delay_s`` (1.0 by default, deliberately: a progress edit
  on its way lands before the card).
* ``worker_cpu_s_per_check``: the workers' CPU time (user + system) over the batch,
  per check; ``bench_cpu_s_per_check`` this process's (submitter, deliver consumer and
  the fake LLM's thread); ``postgres_cpu_s_per_check`` the server's live processes';
  ``machine_busy``: the share of all cores busy over the batch (the whole machine,
  anyone else's load included).

    python bench/scale.py [--workers 1,2,4] [--concurrency 2] [--checks 16] [--probes 8]
        [--llm-delay-s 0.5] [--deliver-delay-s 1.0] [--poll-s 2.0] [--smoke]

Run it on an otherwise idle machine. The last line is one JSON object: the settings,
``cpu_count``, ``runs`` (per worker count) and ``speedup_2_over_1``/``speedup_4_over_1``
(ratios of checks_per_min).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import logging
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

# The fakes and the throwaway PostgreSQL server live with the tests (the tests package).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.smoke import smoke_args
from lib.zofia_workers import Workers, worker_env

from tests.peers.fakes.fake_checker import FakeChecker, HashingEncoder
from tests.peers.fakes.panel_script import PanelScript, schema_name
from tests.peers.servers.loopback import running_in_thread
from tests.peers.servers.openai_peer import FakeOpenAI
from tests.peers.servers.pg_server import PostgresServer

from bots.app.runtime import build_service
from bots.app.settings import Settings
from bots.service.checks import CheckService
from bots.service.queue.jobs import deliver_queue, make_app
from bots.service.queue.worker import register_deliver_task, run_jobs
from bots.service.records import CardState, CheckFailedError, Message, Requester
from storage.deliveries import Claim

SECRET = "bench-scale-secret-0123"
API_KEY = "sk-bench"
TOWNS = [
    "Springfield", "Shelbyville", "Ogdenville", "North Haverbrook", "Capital City",
    "Brockway", "Cypress Creek", "Waverly Hills", "Rome", "Paris", "Lisbon", "Oslo",
    "Krakow", "Denver", "Omaha", "Austin",
]  # fmt: skip
ACTS = [
    "banned bicycles from every street, with a fine of {n} dollars",
    "closed all {n} public libraries because nobody reads books anymore",
    "found {n} crocodiles living in the sewers under the central station",
    "raised the bus fare to {n} dollars for pensioners only",
    "will give every resident {n} dollars to move to Mars by 2030",
    "ordered {n} new speed cameras for the highway to the border",
]


def post_text(n: int) -> str:
    """Distinct claims: sixteen towns, six acts, a number each."""
    town, act = TOWNS[n % len(TOWNS)], ACTS[(n // len(TOWNS)) % len(ACTS)]
    return f"BREAKING: the mayor of {town} {act.format(n=137 + 31 * n)}, officials said."


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[int(q * (len(ordered) - 1))], 1)


def cpu_s(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
    return total


def postgres_pids(server: PostgresServer) -> list[int]:
    postmaster = psutil.Process(int((server.data_dir / "postmaster.pid").read_text().split()[0]))
    return [postmaster.pid, *(child.pid for child in postmaster.children())]


def machine_busy_since(before: Any) -> float:
    after = psutil.cpu_times()
    spent = {f: getattr(after, f) - getattr(before, f) for f in after._fields}
    idle = spent.get("idle", 0.0) + spent.get("iowait", 0.0)
    total = sum(v for f, v in spent.items() if f not in ("guest", "guest_nice"))
    return round(1 - idle / total, 3) if total > 0 else 0.0


def round_settings(url: str, args: argparse.Namespace) -> Settings:
    return Settings.model_validate(
        {
            "storage": {"url": url, "secret": SECRET},
            "service": {
                "user_per_minute": 100_000,
                "chat_per_minute": 100_000,
                "user_daily": 100_000,
                "chat_daily": 100_000,
                "max_pending_checks": 100_000,
                "daily_token_budget": 10**12,
            },
            "queue": {"deliver_delay_s": args.deliver_delay_s, "poll_s": args.poll_s},
        }
    )


def scale_worker_env(url: str, llm_url: str, args: argparse.Namespace) -> dict[str, str]:
    return worker_env(
        url,
        SECRET,
        llm_url,
        API_KEY,
        ZOFIA__QUEUE__DELIVER_DELAY_S=str(args.deliver_delay_s),
        ZOFIA__QUEUE__POLL_S=str(args.poll_s),
    )


@dataclass
class Batch:
    """What one round's batch (and the probes after it) came to."""

    cards: dict[str, float] = field(default_factory=dict)  # check id → card posted
    resolved: dict[str, float] = field(default_factory=dict)  # check id → handle resolved
    failed: list[str] = field(default_factory=list)
    probes: list[str] = field(default_factory=list)  # the one-at-a-time checks after the batch
    wall: float = 0.0  # the first submit to the last result, s
    llm_calls: list[dict[str, Any]] = field(default_factory=list)  # the batch's
    worker_cpu: float = 0.0
    own_cpu: float = 0.0
    pg_cpu: float = 0.0
    busy: float = 0.0


async def run_batch(
    service: CheckService,
    server: PostgresServer,
    llm: FakeOpenAI,
    pids: list[int],
    args: argparse.Namespace,
    batch: Batch,
) -> None:
    """Submit ``--checks`` posts at once and wait for their results; the wall time, the
    LLM calls and the CPU time they took."""
    delivery = service.delivery
    assert delivery is not None  # the store is on PostgreSQL: the queued mode
    calls_before = len(llm.requests)
    cpu_before, machine_before = cpu_s(pids), psutil.cpu_times()
    pg_before, own_before = cpu_s(postgres_pids(server)), time.process_time()

    async def one(i: int) -> None:
        requester = Requester("bench", f"user-{i}", f"chat-{i}")
        async with service.take(Message(post_text(i)), requester) as handle:
            await delivery.expect(handle.check_id, "bench", {"n": i})
        try:
            await handle.result()
            batch.resolved[handle.check_id] = time.monotonic()
        except CheckFailedError as exc:
            batch.failed.append(str(exc))

    start = time.monotonic()
    async with asyncio.timeout(args.timeout_s):
        await asyncio.gather(*(one(i) for i in range(args.checks)))
    batch.wall = (max(batch.resolved.values()) if batch.resolved else time.monotonic()) - start
    batch.worker_cpu = cpu_s(pids) - cpu_before
    batch.own_cpu = time.process_time() - own_before
    batch.pg_cpu = cpu_s(postgres_pids(server)) - pg_before  # backends that ended: lost
    batch.busy = machine_busy_since(machine_before)
    batch.llm_calls = llm.requests[calls_before:]


async def run_probes(service: CheckService, args: argparse.Namespace, batch: Batch) -> None:
    """Once the batch's cards are in (or a bounded wait), ``--probes`` checks one at a time."""
    deadline = time.monotonic() + args.deliver_delay_s + 3 * args.poll_s + 30
    while not set(batch.resolved) <= set(batch.cards) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    async with asyncio.timeout(args.timeout_s):
        for i in range(args.checks, args.checks + args.probes):
            requester = Requester("bench", f"user-{i}", f"chat-{i}")
            async with service.take(Message(post_text(i)), requester) as handle:
                batch.probes.append(handle.check_id)
            with contextlib.suppress(CheckFailedError):
                await handle.result()


def round_figures(count: int, batch: Batch, rows: list[Any]) -> dict[str, Any]:
    """One worker count's figures; ``rows``: (id, created_at, started_at) of started checks."""
    cards, resolved, probes, wall = batch.cards, batch.resolved, batch.probes, batch.wall
    waited = {
        check: (dt.datetime.fromisoformat(b) - dt.datetime.fromisoformat(a)).total_seconds() * 1000
        for check, a, b in rows
    }
    waits = [ms for check, ms in waited.items() if check not in probes]
    pickups = [waited[check] for check in probes if check in waited]
    delivery = [(cards[c] - at) * 1000 for c, at in resolved.items() if c in cards]
    done = len(resolved)
    return {
        "workers": count,
        "completed": done,
        "failed": len(batch.failed),
        "first_failure": batch.failed[0][:200] if batch.failed else None,
        "wall_s": round(wall, 2),
        "checks_per_min": round(done / wall * 60, 2) if done and wall > 0 else 0.0,
        "enqueue_to_start_p50_ms": percentile(waits, 0.5),
        "enqueue_to_start_p95_ms": percentile(waits, 0.95),
        "pickup_p50_ms": percentile(pickups, 0.5),
        "pickup_p95_ms": percentile(pickups, 0.95),
        "delivered": len(delivery),
        "delivery_p50_ms": percentile(delivery, 0.5),
        "delivery_p95_ms": percentile(delivery, 0.95),
        "llm_calls_per_check": round(len(batch.llm_calls) / max(1, done), 1),
        "engine_runs": sum(schema_name(b) == "triagereply" for b in batch.llm_calls),
        "worker_cpu_s_per_check": round(batch.worker_cpu / max(1, done), 2),
        "bench_cpu_s_per_check": round(batch.own_cpu / max(1, done), 2),
        "postgres_cpu_s_per_check": round(batch.pg_cpu / max(1, done), 2),
        "machine_busy": batch.busy,
    }


async def one_round(
    server: PostgresServer, llm: FakeOpenAI, count: int, args: argparse.Namespace, tmp: Path
) -> dict[str, Any]:
    """Start ``count`` workers on a fresh database, run one batch, stop them."""
    name = f"bench_scale_{count}"
    url = server.create_database(name)
    settings = round_settings(url, args)
    service = build_service(settings, FakeChecker(), HashingEncoder())  # migrates the store
    await service.start()  # and creates the queue's tables
    folder = tmp / name
    folder.mkdir()
    workers = Workers(scale_worker_env(url, llm.base_url, args), folder)
    batch = Batch()

    async def post_card(claim: Claim, found: CardState) -> None:
        batch.cards[claim.check_id] = time.monotonic()

    app = make_app(url, max_connections=10)
    register_deliver_task(app, service.store, "bench", post_card, settings.queue)
    try:
        workers.start(count, args.concurrency)
        await workers.ready(args.ready_timeout_s)
        pids = [p.pid for p in workers.procs]
        async with app.open_async():
            consumer = asyncio.create_task(
                run_jobs(app, [deliver_queue("bench")], settings.queue, concurrency=8, name="bench")
            )
            try:
                await run_batch(service, server, llm, pids, args, batch)
                await run_probes(service, args, batch)
            finally:  # before the app closes, on an error too
                consumer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await consumer
        rows = (
            service.store.postgres()
            .execute("SELECT id, created_at, started_at FROM checks WHERE started_at IS NOT NULL")
            .fetchall()
        )
    finally:
        workers.stop()
        await service.aclose()
        service.store.close()
        server.drop_database(name)
    return round_figures(count, batch, rows)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    counts = [int(part) for part in args.workers.split(",") if part.strip()]
    results: dict[str, dict[str, Any]] = {}
    llm_server = FakeOpenAI(PanelScript(), api_key=API_KEY, delay_s=args.llm_delay_s)
    with (
        tempfile.TemporaryDirectory(prefix="zofia-scale-") as tmp,
        PostgresServer() as server,
        running_in_thread(llm_server) as llm,
    ):
        assert isinstance(llm, FakeOpenAI)
        for count in counts:
            llm.max_in_flight = 0
            result = await one_round(server, llm, count, args, Path(tmp))
            result["llm_max_in_flight"] = llm.max_in_flight
            results[str(count)] = result
            shown = [
                *("checks_per_min", "completed", "wall_s", "enqueue_to_start_p50_ms"),
                *("enqueue_to_start_p95_ms", "pickup_p50_ms", "pickup_p95_ms"),
                *("delivery_p50_ms", "delivery_p95_ms", "worker_cpu_s_per_check", "machine_busy"),
            ]
            print(f"{count} x {args.concurrency}:", *(f"{k}={result[k]}" for k in shown))
    summary: dict[str, Any] = {
        "cpu_count": os.cpu_count(),
        "checks": args.checks,
        "concurrency": args.concurrency,
        "llm_delay_s": args.llm_delay_s,
        "deliver_delay_s": args.deliver_delay_s,
        "poll_s": args.poll_s,
        "runs": results,
    }
    base = results.get("1", {}).get("checks_per_min")
    for n in ("2", "4"):
        rate = results.get(n, {}).get("checks_per_min")
        summary[f"speedup_{n}_over_1"] = round(rate / base, 2) if base and rate else None
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    parser.add_argument("--concurrency", type=int, default=2, help="checks per worker")
    parser.add_argument("--checks", type=int, default=16, help="distinct posts per count")
    parser.add_argument("--probes", type=int, default=8, help="one-at-a-time checks after")
    parser.add_argument("--llm-delay-s", type=float, default=0.5)
    parser.add_argument("--deliver-delay-s", type=float, default=1.0)
    parser.add_argument("--poll-s", type=float, default=2.0)
    parser.add_argument("--ready-timeout-s", type=float, default=600.0)
    parser.add_argument("--timeout-s", type=float, default=1800.0, help="per batch")
    args = smoke_args(
        parser,
        {
            "workers": "1",
            "checks": 2,
            "probes": 1,
            "llm_delay_s": 0.05,
            "deliver_delay_s": 0.1,
            "poll_s": 0.5,
            "timeout_s": 120.0,
        },
    )
    logging.basicConfig(level=logging.WARNING)
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
