"""Not a bench script: the other process of ``bench/loop_stall.py`` (``bench/lib/`` holds
such helpers). It takes the store's write lock, says so, holds it for a while, lets go:
on SQLite a ``BEGIN IMMEDIATE``; on PostgreSQL the advisory write lock,
``storage.postgres.WRITE_LOCK``, as another replica's slow transaction would."""

from __future__ import annotations

import asyncio
import sys
from asyncio.subprocess import PIPE, Process

from storage.postgres import WRITE_LOCK

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


async def start_holder(target: str, postgres: bool, hold_s: float) -> Process:
    """The other process, started on the store ``target`` (a SQLite path or a URL)."""
    code = POSTGRES_HOLDER if postgres else SQLITE_HOLDER
    return await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, target, str(hold_s), str(WRITE_LOCK), stdout=PIPE
    )


async def wait_held(holder: Process) -> None:
    """Until the other process says it holds the lock."""
    assert holder.stdout is not None
    line = await asyncio.wait_for(holder.stdout.readline(), HOLDER_START_S)
    if line.strip() != b"held":
        raise SystemExit("the other process did not take the write lock")


async def wait_released(holder: Process, hold_s: float) -> None:
    """Until the other process has let go of the lock and exited."""
    if await asyncio.wait_for(holder.wait(), hold_s + HOLDER_START_S):
        raise SystemExit(f"the other process failed ({holder.returncode})")


async def stop_holder(holder: Process) -> None:
    """Kill the other process if it still runs."""
    if holder.returncode is None:
        holder.kill()
        await asyncio.wait_for(holder.wait(), 10)
