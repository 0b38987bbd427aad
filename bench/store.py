"""Repeat answers and report writes at 100,000 stored checks, on SQLite or PostgreSQL.

Builds a store of N checks (a temporary SQLite file, or PostgreSQL): the first ones
written one by one through ``store.reports.save`` (that is the write-throughput
figure), the rest copied in bulk, spread over 1,000 chats and 5,000 users; each
has a report of realistic size and a 384-dimensional post vector. The default
rate limits apply. Then, through the real service ``build_service`` gives (the
``CheckService``; on PostgreSQL the same service with its ``QueuedDelivery``, its repeats answered
from the store the same way; real MiniLM for near repeats; no LLM is called), it
times ``take`` → report in hand for exact repeats (the same text, re-spaced) and
near repeats (the text with a "Fwd:" prefix and a hashtag).

Near repeats are timed twice in the one run: once the store holds 10,000 checks
(another hashtag, so that these are not exact repeats of the first round's), and
again, with the exact repeats, once it holds all N. Each time the near-repeat index
is loaded afresh from the store, as a process starting then would load it. A near
repeat's cost should stay flat from 10,000 to N, not grow with the store.

    python bench/store.py [--checks 100000] [--queries 200] [--backend sqlite] [--smoke]
    python bench/store.py --backend postgresql [--url postgresql://…]

Without ``--url``, PostgreSQL is a temporary server (tests/peers/servers/pg_server.py: Debian's
binaries, fsync off); a ``--url`` must name an empty database to throw away.

The bulk copy is one code path on both engines: ``db.table(...).insert_all`` in
batches of 10,000 rows, one write transaction each (sqlite-utils' multi-row
INSERTs on SQLite, psycopg's pipelined ``executemany`` on PostgreSQL).

The last line is one JSON object: backend, exact_p50_ms, exact_p95_ms, near_p50_ms,
near_p95_ms (at N), near_p50_ms_10k and near_p95_ms_10k (at 10,000; ``null`` when N is
below that), reports_per_s, and the sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# The temporary PostgreSQL server is the tests' (tests/peers/servers/pg_server.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.smoke import smoke_args

from tests.factories import sample_report
from tests.peers.servers.pg_server import PostgresServer

from bots.app.runtime import build_service
from bots.app.settings import Settings
from bots.service.checks import CheckService
from bots.service.near import canonical_text
from bots.service.records import Message, Requester
from storage.keys import keyed_text_hash, new_check_id
from storage.postgres import is_postgres
from storage.store import CheckStore
from storage.transaction import write_transaction
from zofia_engine.engine import Engine
from zofia_engine.post import Post

WRITES = 2000
BATCH = 10_000
#: the store size of the first round of near repeats
FIRST_ROUND = 10_000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bulk_fill(store: CheckStore, secret: bytes, template_id: str, start: int, end: int) -> None:
    """Checks ``start``..``end``: copies of the stored check ``template_id`` (its check
    and report rows) with new ids, texts, chats, users and random post vectors."""
    db, rng = store.db, np.random.default_rng(start)
    check = next(db.query("SELECT * FROM checks WHERE id = ?", [template_id]))
    check.pop("rowid", None)  # PostgreSQL's identity column; SQLite's rowid is implicit
    report = next(db.query("SELECT * FROM reports WHERE check_id = ?", [template_id]))
    now = dt.datetime.now(dt.UTC).isoformat()
    for first in range(start, end, BATCH):
        ids = [new_check_id() for _ in range(min(BATCH, end - first))]
        noise = rng.standard_normal((len(ids), 384)).astype(np.float32)
        with write_transaction(db):
            db.table("checks").insert_all(
                [
                    check
                    | {
                        "id": cid,
                        "chat": f"chat-{k % 1000}",
                        "requester": f"user-{k % 5000}",
                        "post_text": f"Bulk {cid}",
                        "text_hash": keyed_text_hash(secret, f"Bulk {cid}"),
                        "created_at": now,
                    }
                    for k, cid in enumerate(ids, first)
                ]
            )
            db.table("reports").insert_all(
                [report | {"check_id": cid, "created_at": now} for cid in ids]
            )
            db.table("post_vectors").insert_all(
                [
                    {"check_id": cid, "dim": 384, "vector": v.tobytes(), "created_at": now}
                    for cid, v in zip(ids, noise, strict=True)
                ]
            )
    # Start from the steady state of a store that grew check by check.
    if is_postgres(db):
        db.execute("VACUUM ANALYZE")  # what autovacuum would have done by now
    else:
        # A bulk load leaves a WAL far past SQLite's autocheckpoint; a store that grew
        # check by check has it checkpointed all along.
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def storage_settings(args: argparse.Namespace, stack: ExitStack, tmp: str) -> dict[str, str]:
    secret = "bench-secret-0123456"
    if args.backend == "sqlite":
        return {"path": str(Path(tmp) / "bench.db"), "secret": secret}
    url = args.url or stack.enter_context(PostgresServer()).create_database("bench")
    return {"url": url, "secret": secret}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument(
        "--url", default="", help="an empty PostgreSQL database (default: a temporary server)"
    )
    args = smoke_args(parser, {"checks": 200, "queries": 5})
    if args.url and args.backend != "postgresql":
        parser.error("--url is for --backend postgresql")
    return args


def bench_settings(storage: dict[str, str]) -> Settings:
    return Settings.model_validate(
        {
            "storage": storage,
            # No model is needed for repeats; a dead endpoint makes a miss fail fast.
            "llm": {"backend": "openai", "openai": {"base_url": "http://127.0.0.1:9/v1"}},
            "service": {
                "user_per_minute": 10**6,
                "chat_per_minute": 10**6,
                "user_daily": 10**6,
                "chat_daily": 10**6,
            },
        }
    )


def write_reports(
    store: CheckStore, secret: bytes, posts: list[str], vectors: np.ndarray, writes: int
) -> tuple[float, str]:
    """Write throughput: full reports, one transaction each, as checks finish. The
    reports written per second, and the id of the last check (the bulk copy's template)."""
    rng = np.random.default_rng(0)
    last_id = ""
    t = time.perf_counter()
    for i in range(writes):
        text = posts[i] if i < len(posts) else f"Filler post {i}"
        # Checked in a group, so that a repeat asked in any chat may be answered from
        # it (storage.other_chats: a private chat's check answers that chat only).
        row = store.checks.create(
            platform="bench",
            chat="c",
            requester="r",
            post=Post(text=text),
            text_hash=keyed_text_hash(secret, text),
            in_group=True,  # a group's check: the repeats come from other chats
        )
        vector = vectors[i] if i < len(posts) else rng.standard_normal(384).astype(np.float32)
        store.reports.save(row.id, sample_report(i), vector=vector)
        last_id = row.id
    return writes / (time.perf_counter() - t), last_id


def timed_fill(store: CheckStore, secret: bytes, template_id: str, start: int, end: int) -> None:
    """:func:`bulk_fill`, its time told on stderr; nothing when ``end <= start``."""
    if end <= start:
        return
    t = time.perf_counter()
    bulk_fill(store, secret, template_id, start, end)
    print(f"bulk copy of {end - start} checks: {time.perf_counter() - t:.1f} s", file=sys.stderr)


async def timed_repeat(service: CheckService, text: str, user: int) -> tuple[float, str | None]:
    """The request taken (``take``) → report in hand, in ms, and the kind of repeat that
    answered it."""
    t = time.perf_counter()
    who = Requester("bench", f"u{user}", f"q{user}")
    async with service.take(Message(text), who) as handle:
        if not handle.done:  # not answered from the store: stop rather than run a check
            handle.cancel()
            raise SystemExit(f"not answered as a repeat: {text!r}")
        outcome = await handle.result()
    return (time.perf_counter() - t) * 1000, outcome.repeat_kind


@dataclass
class Timings:
    """The repeats' times (ms) and the vectors indexed, at 10,000 checks and at N."""

    exact: list[float] = field(default_factory=list)
    near: list[float] = field(default_factory=list)
    near_10k: list[float] = field(default_factory=list)
    stored: int = 0
    stored_10k: int | None = None


async def time_repeats(
    service: CheckService, posts: list[str], first_round: bool, grow: Callable[[], None]
) -> Timings:
    """The near repeats at 10,000 checks (with ``first_round``), then ``grow`` the store
    to N; the exact and near repeats at N."""
    timings = Timings()
    if first_round:  # the near repeats at 10,000 checks; then the store grows to N
        timings.stored_10k = len(service.repeats.index)
        for i, post in enumerate(posts):
            ms, kind = await timed_repeat(service, f"Fwd: {post} #rumour", i)
            assert kind == "near", kind
            timings.near_10k.append(ms)
        grow()
        # The index as a process starting now would load it: every vector.
        await service.repeats.load(since=service.clock() - service.window)
    timings.stored = len(service.repeats.index)
    for i, post in enumerate(posts):
        ms, kind = await timed_repeat(service, "  " + post.replace(" ", "  ") + " ", i)
        assert kind == "exact", kind
        timings.exact.append(ms)
        ms, kind = await timed_repeat(service, f"Fwd: {post} #breaking", i)
        assert kind == "near", kind
        timings.near.append(ms)
    return timings


def summary(
    args: argparse.Namespace, queries: int, timings: Timings, reports_per_s: float
) -> dict[str, object]:
    """The last line's figures."""
    exact, near, near_10k = timings.exact, timings.near, timings.near_10k
    return {
        "backend": args.backend,
        "checks": args.checks,
        "vectors_indexed": timings.stored,
        "queries": queries,
        "exact_p50_ms": round(statistics.median(exact), 2),
        "exact_p95_ms": round(percentile(exact, 0.95), 2),
        "near_p50_ms": round(statistics.median(near), 2),
        "near_p95_ms": round(percentile(near, 0.95), 2),
        "near_p50_ms_10k": round(statistics.median(near_10k), 2) if near_10k else None,
        "near_p95_ms_10k": round(percentile(near_10k, 0.95), 2) if near_10k else None,
        "vectors_indexed_10k": timings.stored_10k,
        "reports_per_s": round(reports_per_s, 1),
    }


async def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        settings = bench_settings(storage_settings(args, stack, tmp))
        engine = Engine(settings.engine)
        encoder = engine.retrieval.encoder
        service = build_service(settings, engine, encoder)
        store, secret = service.store, service.secret
        posts = [
            f"Post number {i}: the mayor of Town {i} banned bicycles on {i % 28 + 1} May."
            for i in range(args.queries)
        ]
        # Stored as the service stores them: the vector of the canonical text.
        vectors = encoder.encode([canonical_text(p) for p in posts]).astype(np.float32)
        writes = min(WRITES, args.checks)
        reports_per_s, template_id = write_reports(store, secret, posts, vectors, writes)
        first_round = args.checks >= FIRST_ROUND
        filled = FIRST_ROUND if first_round else args.checks
        timed_fill(store, secret, template_id, writes, filled)
        await service.start(resume=False)
        try:
            timings = await time_repeats(
                service,
                posts,
                first_round,
                lambda: timed_fill(store, secret, template_id, filled, args.checks),
            )
        finally:
            await service.aclose()
            await engine.aclose()
            store.close()  # before a temporary server stops

    print(json.dumps(summary(args, len(posts), timings, reports_per_s)))


if __name__ == "__main__":
    asyncio.run(main())
