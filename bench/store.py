"""Repeat answers and report writes at 100,000 stored checks.

Builds a store of N checks in a temporary SQLite file: the first ones written
one by one through ``CheckStore.save_report`` (that is the write-throughput
figure), the rest copied in bulk, spread over 1,000 chats and 5,000 users; each
has a report of realistic size and a 384-dimensional post vector. The default
rate limits apply. Then, through the real ``CheckService`` (real
MiniLM for near repeats; no LLM is called), it times ``submit`` → report in hand
for exact repeats (the same text, re-spaced) and near repeats (the text with a
"Fwd:" prefix and a hashtag).

    python bench/store.py [--checks 100000] [--queries 200]

The last line is one JSON object: exact_p50_ms, exact_p95_ms, near_p50_ms,
near_p95_ms, reports_per_s, and the sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import statistics
import tempfile
import time
from pathlib import Path

# This script shares its name with the package it measures: keep its folder off the path.
import numpy as np

from bots.common.runtime import build_service
from bots.common.settings import Settings
from storage.keys import keyed_text_hash, new_check_id
from storage.near import canonical_text
from storage.service import Requester
from zofia_engine.engine import Engine
from zofia_engine.post import Post
from zofia_engine.report import (
    Analyses,
    ClaimResult,
    Confidence,
    Debate,
    DebateTurn,
    EvidenceItem,
    JudgeRuling,
    LinguistFinding,
    Report,
    Usage,
)

WRITES = 2000
SENTENCE = "The council discussed the budget, the new bike lanes and the harbour plan."


def sample_report(i: int) -> Report:
    """A report of about the size a real check stores (10 documents, 5 claims, 3 rounds)."""
    text = " ".join([SENTENCE] * 4)
    return Report(
        verdict="fake" if i % 2 else "real",
        confidence=Confidence(value=0.8, basis="judge's token probabilities"),
        summary=text,
        keywords=[],
        evidence=[
            EvidenceItem(
                id=f"web-{j}",
                source="web",
                provider="brave",
                title=f"Page {j}",
                url=f"https://example.org/{i}/{j}",
                text=text,
            )
            for j in range(1, 11)
        ],
        claims=[
            ClaimResult(
                id=f"claim-{j}",
                kind="sub" if j else "core",
                text=SENTENCE,
                label="refutes",
                reason=SENTENCE,
            )
            for j in range(5)
        ],
        analyses=Analyses(
            linguist=[
                LinguistFinding(dimension=f"d{j}", analysis=SENTENCE, lean="fake") for j in range(5)
            ]
        ),
        debate=Debate(
            turns=[
                DebateTurn(round=r, side=side, rebuttal=text, argument=text, cites=["post"])
                for r in range(1, 4)
                for side in ("pro", "con")
            ],
            rulings=[
                JudgeRuling(round=r, decision="continue", reason=SENTENCE) for r in range(1, 4)
            ],
            rounds=3,
            max_rounds=5,
        ),
        usage=Usage(),
        timings={"total_ms": 1.0},
        degraded=[],
    )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.model_validate(
            {
                "storage": {
                    "path": str(Path(tmp) / "bench.db"),
                    "secret": "bench-secret-0123456",
                },
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
        engine = Engine(settings)
        encoder = engine.retrieval.encoder
        service = build_service(settings, engine, encoder)
        store, secret = service.store, service.secret
        posts = [
            f"Post number {i}: the mayor of Town {i} banned bicycles on {i % 28 + 1} May."
            for i in range(args.queries)
        ]
        # Stored as the service stores them: the vector of the canonical text.
        vectors = encoder.encode([canonical_text(p) for p in posts]).astype(np.float32)
        rng = np.random.default_rng(0)

        # Write throughput: full reports, one transaction each, as checks finish.
        t = time.perf_counter()
        for i in range(WRITES):
            text = posts[i] if i < len(posts) else f"Filler post {i}"
            row = store.create_check(
                platform="bench",
                chat="c",
                requester="r",
                post=Post(text=text),
                text_hash=keyed_text_hash(secret, text),
            )
            vector = vectors[i] if i < len(posts) else rng.standard_normal(384).astype(np.float32)
            store.save_report(row.id, sample_report(i), vector=vector)
        reports_per_s = WRITES / (time.perf_counter() - t)

        # The rest in bulk: copies of one stored check with new ids and random vectors.
        db = store.db
        now = dt.datetime.now(dt.UTC).isoformat()
        report_json = sample_report(1).model_dump_json()
        for start in range(WRITES, args.checks, 10_000):
            ids = [new_check_id() for _ in range(min(10_000, args.checks - start))]
            noise = rng.standard_normal((len(ids), 384)).astype(np.float32)
            with db.conn:
                db.conn.executemany(
                    "INSERT INTO checks (id, platform, chat, requester, status, post_text,"
                    " text_hash, created_at, error) VALUES (?, 'bench', ?, ?, 'done', ?, ?,"
                    " ?, '')",
                    [
                        (
                            cid,
                            f"chat-{k % 1000}",
                            f"user-{k % 5000}",
                            f"Bulk {cid}",
                            keyed_text_hash(secret, f"Bulk {cid}"),
                            now,
                        )
                        for k, cid in enumerate(ids, start)
                    ],
                )
                db.conn.executemany(
                    "INSERT INTO reports (check_id, verdict, confidence, summary, report_json,"
                    " n_evidence, n_claims, rounds, llm_calls, prompt_tokens,"
                    " completion_tokens, created_at) VALUES (?, 'fake', 0.8, '', ?, 10, 5, 3,"
                    " 0, 0, 0, ?)",
                    [(cid, report_json, now) for cid in ids],
                )
                db.conn.executemany(
                    "INSERT INTO post_vectors (check_id, dim, vector, created_at)"
                    " VALUES (?, 384, ?, ?)",
                    [(cid, v.tobytes(), now) for cid, v in zip(ids, noise, strict=True)],
                )
        # A bulk load leaves a WAL far past SQLite's autocheckpoint; a store that grew
        # check by check has it checkpointed all along. Start from that steady state.
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        await service.start(resume=False)
        stored = len(service.repeats.index)

        async def timed(text: str, user: int) -> tuple[float, str | None]:
            t = time.perf_counter()
            who = Requester("bench", f"u{user}", f"q{user}")
            handle = await service.submit(Post(text=text), who)
            if not handle.done:  # not answered from the store: stop rather than run a check
                handle.cancel()
                raise SystemExit(f"not answered as a repeat: {text!r}")
            outcome = await handle.result()
            return (time.perf_counter() - t) * 1000, outcome.repeat_kind

        exact, near = [], []
        for i, post in enumerate(posts):
            ms, kind = await timed("  " + post.replace(" ", "  ") + " ", i)
            assert kind == "exact", kind
            exact.append(ms)
            ms, kind = await timed(f"Fwd: {post} #breaking", i)
            assert kind == "near", kind
            near.append(ms)
        await engine.aclose()

    print(
        json.dumps(
            {
                "checks": args.checks,
                "vectors_indexed": stored,
                "queries": len(posts),
                "exact_p50_ms": round(statistics.median(exact), 2),
                "exact_p95_ms": round(percentile(exact, 0.95), 2),
                "near_p50_ms": round(statistics.median(near), 2),
                "near_p95_ms": round(percentile(near, 0.95), 2),
                "reports_per_s": round(reports_per_s, 1),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
