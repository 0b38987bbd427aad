"""What the "nothing slow on the event loop" tests measure with: a ticker that keeps the
loop's longest stall, and a store kept busy meanwhile, by another thread holding its
write (SQLite, or either engine) or by another PostgreSQL session holding the advisory
write lock every write transaction takes first."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

import psycopg

from storage.postgres import WRITE_LOCK
from storage.store import CheckStore

__all__ = ["LoopWatch", "StoreHeld", "advisory_lock_held", "write_held"]

#: what a holder enters and stays in
Holding = Callable[[], contextlib.AbstractContextManager[Any]]


class LoopWatch:
    """While the block runs, a task on the loop sleeps ``tick_s`` over and over and keeps
    how much later than asked it woke: :attr:`longest` is the loop's longest stall.
    The ticker stops by itself after ``limit_s`` even if the block never ends. The
    garbage is collected before it starts: a full collection of a long test session's
    heap stalls the loop for its own reasons, wherever it happens to fall.
    """

    def __init__(self, *, tick_s: float = 0.01, limit_s: float = 60.0) -> None:
        self.tick_s = tick_s
        self.limit_s = limit_s
        self.longest = 0.0
        self.ticks = 0
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LoopWatch:
        gc.collect()
        self._task = asyncio.create_task(self._tick())
        await asyncio.sleep(0)  # the first tick is under way
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _tick(self) -> None:
        deadline = time.monotonic() + self.limit_s
        while (before := time.monotonic()) < deadline:
            await asyncio.sleep(self.tick_s)
            self.longest = max(self.longest, time.monotonic() - before - self.tick_s)
            self.ticks += 1


class StoreHeld:
    """A thread holding something the store's writes need for ``seconds``, started (and
    holding it) when the constructor returns; :attr:`released` is set once it lets go,
    and :attr:`released_at` is when it began to (``time.monotonic()``)."""

    def __init__(
        self, hold: Callable[[], contextlib.AbstractContextManager[object]], seconds: float
    ):
        self.seconds = seconds
        self.released = threading.Event()
        self.released_at = 0.0
        self.error: BaseException | None = None
        self._holding = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(hold,), daemon=True)
        self._threads = [self._thread]
        self._thread.start()
        if not self._holding.wait(10):
            raise RuntimeError(f"the store was not taken: {self.error!r}")

    def _run(self, hold: Holding) -> None:
        try:
            with hold():
                self._holding.set()
                time.sleep(self.seconds)
                self.released_at = time.monotonic()
        except BaseException as exc:  # reported by the constructor, or by done()
            self.error = exc
        finally:
            self.released.set()

    def also(self, thread: threading.Thread) -> None:
        """Wait for ``thread`` too in :meth:`done`."""
        self._threads.append(thread)

    async def done(self) -> None:
        """Wait (off the loop) until the threads are through."""
        for thread in self._threads:
            await asyncio.to_thread(thread.join, 30)
            assert not thread.is_alive()
        assert self.error is None


def write_held(store: CheckStore, seconds: float) -> StoreHeld:
    """Another thread in its write: the store's lock and an open write transaction."""
    return StoreHeld(store.write, seconds)


def advisory_lock_held(url: str, store: CheckStore, seconds: float) -> StoreHeld:
    """Another PostgreSQL session (another replica, as far as the store can tell) holding
    the advisory write lock, and a write of this process waiting for it (returns once it
    waits): every other store call of the process waits behind that one."""

    @contextlib.contextmanager
    def hold() -> Iterator[None]:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", [WRITE_LOCK])
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", [WRITE_LOCK])

    held = StoreHeld(hold, seconds)
    writer = threading.Thread(target=_write_once, args=(store,), daemon=True)
    writer.start()
    held.also(writer)
    with psycopg.connect(url, autocommit=True) as conn:
        deadline = time.monotonic() + 10
        while not conn.execute(_WAITING).fetchone():
            assert time.monotonic() < deadline, "the store's write never waited for the lock"
            time.sleep(0.01)
    return held


_WAITING = "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"


def _write_once(store: CheckStore) -> None:
    with store.write():
        store.chats.set("test", "writer", "waited", True)
