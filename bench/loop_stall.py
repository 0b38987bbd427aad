"""The longest event-loop stall of a bot process while its store is busy elsewhere.

The process is set up as a bot's: the real check service (``build_service`` of
bots/app/runtime.py; on PostgreSQL with its ``QueuedDelivery``) checking with the
tests' ``FakeChecker`` and ``HashingEncoder`` (tests/peers/fakes/fake_checker.py), and the
bots' requests made through the service's front door, its store calls on the service's
own threads, off the loop. A ticker on the loop (``LoopWatch`` of tests/loop_watch.py: a
10 ms sleep, over and over) keeps the longest the loop went without running it. Two phases:

1. hold: ANOTHER PROCESS holds the store's write lock for ``--hold-s`` (on SQLite a
   subprocess in ``BEGIN IMMEDIATE``; on PostgreSQL one holding the advisory write
   lock, ``storage.postgres.WRITE_LOCK``, as another replica's slow transaction
   would). Meanwhile the loop keeps serving: four times over the hold, a request
   (admit, submit a new check, release; on SQLite the fake check runs here), a read
   of a chat's settings and a write of them.
2. purge (its target is PostgreSQL's; it runs on SQLite too): ``--purge-checks``
   checks older than the retention, each with a report of
   realistic size (tests/factories.py ``sample_report``: 10 documents, 5 claims,
   5 analyses, 9 debate turns, a post vector), copied in bulk on the server
   (``INSERT … SELECT``); then ``service.purge_expired`` runs in a thread as the bots
   run it, while a request round as above goes out every second. Then the purge runs
   a second time: it must rewrite nothing.

    python bench/loop_stall.py [--backend sqlite] [--hold-s 10] [--purge-checks 200000]
    python bench/loop_stall.py --backend postgresql [--url postgresql://…]

Without ``--url``, PostgreSQL is a temporary server (tests/peers/servers/pg_server.py: Debian's
binaries, fsync off); a ``--url`` must name an empty database to throw away.
``--purge-checks 0`` skips the purge phase.

Rows written are counted as the database sees them: on SQLite the store connection's
``total_changes``; on PostgreSQL, over the store's tables, the rows whose ``xmin`` is
a transaction begun after a mark (each updated row) plus the rows gone (each deleted
one). ``purge_rows`` (the first purge) includes the few rows the requests served
meanwhile wrote; ``second_purge_rows`` is the second purge's alone, with nothing else
running.

The last line is one JSON object: ``backend``, ``hold_s``, ``purge_checks``,
``max_stall_ms`` (the longest stall of both phases), ``hold_stall_ms``,
``purge_stall_ms``, ``purge_s``, ``purged`` (checks), ``purge_rows``,
``second_purge_s``, ``second_purge_checks``, ``second_purge_rows``, and what the
requests served meanwhile came to (``hold_requests``, ``purge_requests``: how many
succeeded, failed and by which error, and the slowest in ms); ``longest_gc_ms``, the
longest garbage collection in either phase (it stops the loop too: a stall as long is
the collector's, not the store's); ``ticks``, how often the ticker ran.

Its parts in bench/lib/: ``lock_holder.py`` (the other process), ``loop_serving.py``
(the ticker and the requests served) and ``purge_fill.py`` (the old checks, and the rows
written).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

# The tests' fakes, ticker and temporary server, from the tests package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.lock_holder import start_holder, stop_holder, wait_held, wait_released
from lib.loop_serving import Bot, Served, Watch, wait_all
from lib.purge_fill import RowsWritten, fill_old_checks

from tests.peers.fakes.fake_checker import FakeChecker, HashingEncoder
from tests.peers.servers.pg_server import PostgresServer

from bots.app.runtime import build_service
from bots.app.settings import Settings

SECRET = "bench-secret-0123456"
ROUNDS_PER_HOLD = 4  # request rounds over the hold
PURGE_ROUND_S = 1.0  # a request round every second of the purge
REQUEST_TIMEOUT_S = 120.0  # the longest any phase waits for its requests
PURGE_TIMEOUT_S = 3600.0


# -- phase 1: another process holds the write lock -------------------------------------------


async def hold_phase(bot: Bot, target: str, postgres: bool, hold_s: float) -> dict[str, Any]:
    served = Served()
    tasks: list[asyncio.Task[None]] = []
    holder = await start_holder(target, postgres, hold_s)
    try:
        async with Watch(limit_s=hold_s + REQUEST_TIMEOUT_S + 60) as watch:
            await wait_held(holder)
            held_at = time.monotonic()
            for k in range(ROUNDS_PER_HOLD):
                at = held_at + k * hold_s / ROUNDS_PER_HOLD
                await asyncio.sleep(max(0.0, at - time.monotonic()))
                tasks += bot.round(served)
            await wait_released(holder, hold_s)
            held_for = time.monotonic() - held_at
            await wait_all(tasks, REQUEST_TIMEOUT_S)
    finally:
        await stop_holder(holder)
    return {
        "stall_ms": round(watch.longest * 1000, 1),
        "gc_ms": round(watch.longest_gc * 1000, 1),
        "ticks": watch.ticks,
        "held_s": round(held_for, 2),
        "requests": served.summary(),
    }


# -- phase 2: the purge of old checks ---------------------------------------------------------


async def purge_phase(bot: Bot, count: int) -> dict[str, Any]:
    service = bot.service
    t = time.perf_counter()
    await asyncio.to_thread(fill_old_checks, service.store, service.secret, count)
    print(f"filled {count} old checks: {time.perf_counter() - t:.1f} s", file=sys.stderr)
    rows = RowsWritten(service.store)
    await asyncio.to_thread(rows.mark)
    served = Served()
    tasks: list[asyncio.Task[None]] = []

    async def timed_purge() -> tuple[int, float]:
        started = time.perf_counter()
        purged = await service.purge_expired()
        return purged, time.perf_counter() - started

    async with Watch(limit_s=PURGE_TIMEOUT_S + REQUEST_TIMEOUT_S) as watch:
        purge = asyncio.create_task(timed_purge())
        deadline = time.monotonic() + PURGE_TIMEOUT_S
        while not purge.done():
            if time.monotonic() > deadline:
                raise SystemExit(f"the purge took over {PURGE_TIMEOUT_S:.0f} s")
            tasks += bot.round(served)
            await asyncio.wait([purge], timeout=PURGE_ROUND_S)
        purged, purge_s = purge.result()
        await wait_all(tasks, REQUEST_TIMEOUT_S)
    purge_rows = await asyncio.to_thread(rows.since_mark)

    # Again, with nothing else running: everything old is purged already.
    await asyncio.to_thread(rows.mark)
    async with Watch(limit_s=PURGE_TIMEOUT_S) as again:
        second, second_s = await timed_purge()
    second_rows = await asyncio.to_thread(rows.since_mark)
    return {
        "stall_ms": round(max(watch.longest, again.longest) * 1000, 1),
        "gc_ms": round(max(watch.longest_gc, again.longest_gc) * 1000, 1),
        "ticks": watch.ticks + again.ticks,
        "purge_s": round(purge_s, 2),
        "purged": purged,
        "purge_rows": purge_rows,
        "second_purge_s": round(second_s, 2),
        "second_purge_checks": second,
        "second_purge_rows": second_rows,
        "requests": served.summary(),
    }


# -- the run ------------------------------------------------------------------------------------


def storage_settings(args: argparse.Namespace, stack: ExitStack, tmp: str) -> dict[str, str]:
    if args.backend == "sqlite":
        return {"path": str(Path(tmp) / "bench.db"), "secret": SECRET}
    url = args.url or stack.enter_context(PostgresServer()).create_database("bench")
    return {"url": url, "secret": SECRET}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        storage = storage_settings(args, stack, tmp)
        settings = Settings.model_validate(
            {
                "storage": storage,
                "service": {
                    "user_per_minute": 10**6,
                    "chat_per_minute": 10**6,
                    "user_daily": 10**6,
                    "chat_daily": 10**6,
                },
            }
        )
        service = build_service(settings, FakeChecker(), HashingEncoder())
        postgres = settings.storage.is_postgres
        try:
            await service.start(resume=False)
            bot = Bot(service)
            served = Served()  # a first round, untimed: nothing is loaded lazily in a phase
            await wait_all(bot.round(served), REQUEST_TIMEOUT_S)
            if served.failed:
                raise SystemExit(f"the warm-up round failed: {served.summary()}")
            target = storage["url"] if postgres else storage["path"]
            hold = await hold_phase(bot, target, postgres, args.hold_s)
            purge = await purge_phase(bot, args.purge_checks) if args.purge_checks else None
        finally:
            await service.aclose()
            await asyncio.to_thread(service.store.close)  # before a temporary server stops
    stalls = [hold["stall_ms"]] + ([purge["stall_ms"]] if purge else [])
    return {
        "backend": args.backend,
        "hold_s": args.hold_s,
        "purge_checks": args.purge_checks,
        "max_stall_ms": max(stalls),
        "hold_stall_ms": hold["stall_ms"],
        "purge_stall_ms": purge["stall_ms"] if purge else None,
        "purge_s": purge["purge_s"] if purge else None,
        "purged": purge["purged"] if purge else None,
        "purge_rows": purge["purge_rows"] if purge else None,
        "second_purge_s": purge["second_purge_s"] if purge else None,
        "second_purge_checks": purge["second_purge_checks"] if purge else None,
        "second_purge_rows": purge["second_purge_rows"] if purge else None,
        "held_s": hold["held_s"],
        "hold_requests": hold["requests"],
        "purge_requests": purge["requests"] if purge else None,
        "longest_gc_ms": max([hold["gc_ms"]] + ([purge["gc_ms"]] if purge else [])),
        "ticks": hold["ticks"] + (purge["ticks"] if purge else 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument(
        "--url", default="", help="an empty PostgreSQL database (default: a temporary server)"
    )
    parser.add_argument("--hold-s", type=float, default=10.0)
    parser.add_argument("--purge-checks", type=int, default=200_000)
    args = parser.parse_args()
    if args.url and args.backend != "postgresql":
        parser.error("--url is for --backend postgresql")
    logging.basicConfig(level=logging.ERROR)
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
