"""The longest event-loop stall of a bot process while its store is busy elsewhere.

The process is set up as a bot's: the real check service (``build_service`` of
bots/common/runtime.py; on PostgreSQL with its ``QueuedDelivery``) checking with the
tests' ``FakeChecker`` and ``HashingEncoder`` (tests/peers/fake_checker.py), and the
bots' store calls made through ``StoreCalls`` (bots/common/store_calls.py), off the
loop. A ticker on the loop (``LoopWatch`` of tests/loop_watch.py: a 10 ms sleep, over
and over) keeps the longest the loop went without running it. Two phases:

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

Without ``--url``, PostgreSQL is a temporary server (tests/pg_server.py: Debian's
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
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import datetime as dt
import gc
import json
import logging
import sys
import tempfile
import time
from asyncio.subprocess import PIPE
from collections.abc import Awaitable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg

# The tests' fakes, ticker and temporary server, not a package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from factories import sample_report
from loop_watch import LoopWatch
from peers.fake_checker import FakeChecker, HashingEncoder
from pg_server import PostgresServer

from bots.common.runtime import build_service
from bots.common.settings import Settings
from bots.common.store_calls import StoreCalls
from storage.keys import keyed_text_hash
from storage.postgres import WRITE_LOCK, is_postgres
from storage.rows import to_iso
from storage.service import CheckService, Requester
from storage.store import CheckStore
from storage.transaction import write_transaction
from zofia_engine.post import Post

SECRET = "bench-secret-0123456"
ROUNDS_PER_HOLD = 4  # request rounds over the hold
PURGE_ROUND_S = 1.0  # a request round every second of the purge
FILL_BATCH = 10_000  # old checks copied per transaction
REQUEST_TIMEOUT_S = 120.0  # the longest any phase waits for its requests
PURGE_TIMEOUT_S = 3600.0
HOLDER_START_S = 30.0

# The other process. It takes the lock, says so, holds it for argv[2] seconds, lets go.
SQLITE_HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
"""
POSTGRES_HOLDER = """
import sys, time, psycopg
with psycopg.connect(sys.argv[1], autocommit=True, connect_timeout=10) as conn:
    conn.execute("SELECT pg_advisory_lock(%s)", [int(sys.argv[3])])
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
    conn.execute("SELECT pg_advisory_unlock(%s)", [int(sys.argv[3])])
"""

TOPICS = ["bridge", "library", "stadium", "airport", "harbour", "tunnel", "museum", "park"]


class Watch(LoopWatch):
    """:class:`LoopWatch`, and the longest garbage collection meanwhile: a collection
    pauses every thread, the loop's too, so it tells the collector's stalls from the
    store's."""

    def __init__(self, *, limit_s: float) -> None:
        super().__init__(limit_s=limit_s)
        self.longest_gc = 0.0
        self._gc_began = 0.0

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_began = time.perf_counter()
        else:
            self.longest_gc = max(self.longest_gc, time.perf_counter() - self._gc_began)

    async def __aenter__(self) -> Watch:
        gc.callbacks.append(self._on_gc)
        await super().__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await super().__aexit__(*exc)
        finally:
            gc.callbacks.remove(self._on_gc)


class Served:
    """What the requests served during a phase came to."""

    def __init__(self) -> None:
        self.ok = 0
        self.failed: collections.Counter[str] = collections.Counter()
        self.slowest_ms = 0.0

    async def timed(self, call: Awaitable[Any]) -> None:
        started = time.perf_counter()
        try:
            await call
            self.ok += 1
        except Exception as exc:  # counted by kind: a store busy too long is an answer too
            self.failed[type(exc).__name__] += 1
        self.slowest_ms = max(self.slowest_ms, (time.perf_counter() - started) * 1000)

    def summary(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "failed": dict(self.failed),
            "slowest_ms": round(self.slowest_ms, 1),
        }


class Bot:
    """The requests a bot serves, through ``StoreCalls`` and the service."""

    def __init__(self, service: CheckService) -> None:
        self.service = service
        self.calls = StoreCalls(service)
        self.queued = service.delivery is not None
        self.sent = 0

    async def check(self, n: int) -> None:
        """A new post to check: admitted, submitted and (run here on SQLite) answered."""
        who = Requester("telegram", f"user-{n}", f"user-{n}", private=True)
        topic = TOPICS[n % len(TOPICS)]
        text = f"BREAKING: the city will close its {topic} number {n} for {n % 9 + 2} years."
        admission = await self.calls.admit(who)
        try:
            handle = await self.service.submit(Post(text=text), who, admission=admission)
            if not self.queued:  # in the queued mode the workers check it; none runs here
                await handle.result()
        finally:
            await self.calls.release(admission)

    async def read_settings(self, n: int) -> None:
        defaults = {"autocheck": False, "language": "", "confidence": 60}
        await self.calls.chat_settings("telegram", f"group-{n}", defaults)

    async def write_settings(self, n: int) -> None:
        await self.calls.set_chat_settings("telegram", f"group-{n}", {"autocheck": n % 2 == 0})

    def round(self, served: Served) -> list[asyncio.Task[None]]:
        """One round of requests, each a task of its own."""
        self.sent += 1
        n = self.sent
        calls = (self.check(n), self.read_settings(n), self.write_settings(n))
        return [asyncio.create_task(served.timed(call)) for call in calls]


async def wait_all(tasks: list[asyncio.Task[None]], timeout: float) -> None:
    """Wait for the requests, up to ``timeout``; the ones still waiting are cancelled."""
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=timeout)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=10)
        print(f"{len(pending)} requests were still waiting; cancelled", file=sys.stderr)


# -- phase 1: another process holds the write lock -------------------------------------------


async def hold_phase(bot: Bot, target: str, postgres: bool, hold_s: float) -> dict[str, Any]:
    code = POSTGRES_HOLDER if postgres else SQLITE_HOLDER
    served = Served()
    tasks: list[asyncio.Task[None]] = []
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, target, str(hold_s), str(WRITE_LOCK), stdout=PIPE
    )
    try:
        async with Watch(limit_s=hold_s + REQUEST_TIMEOUT_S + 60) as watch:
            assert holder.stdout is not None
            line = await asyncio.wait_for(holder.stdout.readline(), HOLDER_START_S)
            if line.strip() != b"held":
                raise SystemExit("the other process did not take the write lock")
            held_at = time.monotonic()
            for k in range(ROUNDS_PER_HOLD):
                at = held_at + k * hold_s / ROUNDS_PER_HOLD
                await asyncio.sleep(max(0.0, at - time.monotonic()))
                tasks += bot.round(served)
            if await asyncio.wait_for(holder.wait(), hold_s + HOLDER_START_S):
                raise SystemExit(f"the other process failed ({holder.returncode})")
            held_for = time.monotonic() - held_at
            await wait_all(tasks, REQUEST_TIMEOUT_S)
    finally:
        if holder.returncode is None:
            holder.kill()
            await asyncio.wait_for(holder.wait(), 10)
    return {
        "stall_ms": round(watch.longest * 1000, 1),
        "gc_ms": round(watch.longest_gc * 1000, 1),
        "ticks": watch.ticks,
        "held_s": round(held_for, 2),
        "requests": served.summary(),
    }


# -- phase 2: the purge of old checks ---------------------------------------------------------


def _columns(db: Any, table: str) -> list[str]:
    """The columns an insert names (on PostgreSQL, not the identity ``rowid``)."""
    if is_postgres(db):
        rows = db.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema ="
            " current_schema() AND table_name = ? AND is_identity = 'NO'"
            " ORDER BY ordinal_position",
            [table],
        ).fetchall()
        return [row[0] for row in rows]
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})").fetchall()]


def fill_old_checks(store: CheckStore, secret: bytes, count: int) -> None:
    """``count`` checks older than any retention, each a copy of one check with a full
    report (every row it has in every table), copied on the server by ``INSERT …
    SELECT`` over a recursive series, ``FILL_BATCH`` checks a transaction."""
    template = store.checks.create(
        platform="telegram",
        chat="c",
        requester="r",
        post=Post(text="The template post of the purge bench."),
        text_hash=keyed_text_hash(secret, "The template post of the purge bench."),
    )
    store.reports.save(
        template.id,
        sample_report(0),
        vector=HashingEncoder().encode(["The template post of the purge bench."])[0],
    )
    db = store.db
    old = to_iso(dt.datetime.now(dt.UTC) - dt.timedelta(days=400))
    # Ids of 16 characters, as new_check_id's, one per number of the series.
    new_id = "'o' || CAST(100000000000000 + g.n AS TEXT)"
    per_check = {
        "id": new_id,
        "chat": "'chat-' || CAST(g.n % 1000 AS TEXT)",
        "requester": "'user-' || CAST(g.n % 5000 AS TEXT)",
        "post_text": "'An old post, number ' || CAST(g.n AS TEXT)",
        "text_hash": "'old-' || CAST(g.n AS TEXT)",
        "check_id": new_id,
        "created_at": ":old",
        "started_at": ":old",
        "finished_at": ":old",
    }
    plans = []
    for table in sorted(db.table_names(), key=lambda name: name != "checks"):
        columns = _columns(db, table)
        key = "id" if table == "checks" else "check_id"
        if key not in columns or table == "reviews":  # a review's own id is its key
            continue
        if not db.execute(f"SELECT 1 FROM {table} WHERE {key} = ?", [template.id]).fetchall():
            continue
        names = ", ".join(columns)
        values = ", ".join(per_check.get(column, f"t.{column}") for column in columns)
        plans.append(
            f"INSERT INTO {table} ({names})"
            " WITH RECURSIVE g(n) AS (SELECT CAST(:lo AS INTEGER)"
            " UNION ALL SELECT n + 1 FROM g WHERE n < :hi)"
            f" SELECT {values} FROM {table} t CROSS JOIN g WHERE t.{key} = :template"
        )
    for lo in range(1, count + 1, FILL_BATCH):
        params = {"lo": lo, "hi": min(count, lo + FILL_BATCH - 1), "old": old}
        with write_transaction(db):
            for plan in plans:  # checks first (sorted so): the others reference them
                db.execute(plan, params | {"template": template.id})
    # Start from the steady state of a store that grew check by check.
    if is_postgres(db):
        db.execute("VACUUM ANALYZE")  # what autovacuum would have done by now
    else:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


class RowsWritten:
    """Rows the store's database writes from :meth:`mark` on (see the module's docstring)."""

    def __init__(self, store: CheckStore) -> None:
        self.db = store.db
        self._mark = 0
        self._counts: dict[str, int] = {}

    def _tables(self) -> list[str]:
        return [t for t in self.db.table_names() if not t.startswith("procrastinate")]

    def mark(self) -> None:
        if not is_postgres(self.db):
            self._mark = self.db.conn.total_changes
            return
        with psycopg.connect(self.db.url, autocommit=True) as conn:
            self._counts = {
                table: conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
                for table in self._tables()
            }
            # The next transaction id: every row written from now on has one as high.
            (xid,) = conn.execute(
                "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint % 4294967296"
            ).fetchone()
            self._mark = int(xid)

    def since_mark(self) -> int:
        if not is_postgres(self.db):
            return int(self.db.conn.total_changes - self._mark)
        written = 0
        with psycopg.connect(self.db.url, autocommit=True) as conn:
            for table in self._tables():
                rows, new = conn.execute(
                    "SELECT count(*), count(*) FILTER (WHERE xmin::text::bigint >= %s)"
                    f' FROM "{table}"',
                    [self._mark],
                ).fetchone()
                written += new + max(0, self._counts.get(table, 0) - rows)
        return written


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
        purged = await asyncio.to_thread(service.purge_expired)
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
