"""Slow work on what senders send, in bounded places: a page's extraction, an image's
decoding and reading.

Such work must not take the threads everything else uses (``asyncio.to_thread``'s
default executor also serves the store, the encoder and the NER), nor queue without
end when one sender sends much of it. Each kind gets its own executor with a fixed
number of workers and a cap on what may wait; past the cap a request is refused at
once with one sentence (:class:`WorkBusyError`).

- :class:`BoundedThreads`: threads, for work that needs this process's loaded models
  (the OCR). A thread cannot be stopped: a job past its time limit is answered with a
  sentence, and its worker stays taken until the job ends (the cap still holds).
- :class:`KillablePool`: worker processes, for work that needs nothing loaded (a
  page's extraction). A job past its time limit has its process killed, and the next
  job gets a fresh one; each process runs under a memory limit.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import logging
import multiprocessing
import multiprocessing.pool
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from .errors import InvalidPostError
from .refusals import PostRefusal

__all__ = ["BoundedThreads", "KillablePool", "WorkBusyError", "WorkTimeoutError"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class WorkBusyError(InvalidPostError):
    """Too much of this kind of work waits already; the message says so in one sentence."""


class WorkTimeoutError(InvalidPostError):
    """The work took longer than its limit; the message says so in one sentence."""


class _Gate:
    """Counts the jobs under way and waiting; refuses one past ``workers + waiting``."""

    def __init__(self, workers: int, waiting: int, busy: PostRefusal | str) -> None:
        self.limit = workers + waiting
        self.busy = busy
        self.held = 0
        self._lock = threading.Lock()  # a worker thread gives its slot back

    def take(self) -> None:
        with self._lock:
            if self.held >= self.limit:
                raise WorkBusyError(self.busy)
            self.held += 1

    def give_back(self) -> None:
        with self._lock:
            self.held -= 1

    @contextlib.contextmanager
    def enter(self) -> Iterator[None]:
        self.take()
        try:
            yield
        finally:
            self.give_back()


class BoundedThreads:
    """``workers`` threads of their own, at most ``waiting`` jobs queued behind them.

    Args:
        name: the threads' name prefix.
        busy: the refusal a refused job gets (its kind, or a sentence).
        too_slow: the refusal a job past its time limit gets (its kind, or a sentence).
    """

    def __init__(
        self,
        name: str,
        *,
        workers: int,
        waiting: int,
        busy: PostRefusal | str,
        too_slow: PostRefusal | str,
    ) -> None:
        self._gate = _Gate(workers, waiting, busy)
        self._threads = ThreadPoolExecutor(workers, thread_name_prefix=name)
        self.too_slow = too_slow

    @property
    def held(self) -> int:
        """Jobs under way or waiting now."""
        return self._gate.held

    async def run(self, call: Callable[..., T], *args: Any, timeout_s: float) -> T:
        """``call(*args)`` on one of the threads, within ``timeout_s`` seconds.

        Raises:
            WorkBusyError: the workers are taken and the queue is full.
            WorkTimeoutError: the job took longer (the thread finishes it regardless).
        """
        self._gate.take()
        job = self._threads.submit(call, *args)
        # The slot is free once the thread is, not when the caller stops waiting.
        job.add_done_callback(lambda _: self._gate.give_back())
        try:
            return await asyncio.wait_for(asyncio.wrap_future(job), timeout_s)
        except TimeoutError:
            raise WorkTimeoutError(self.too_slow) from None


def _limit_memory(max_bytes: int) -> None:
    """A worker process's start: cap its address space (a page that would take more
    raises ``MemoryError`` there, not here)."""
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))


class KillablePool:
    """``workers`` worker processes (started on first use, ``spawn``ed), at most
    ``waiting`` jobs queued behind them; a job past its limit has its process killed.

    Args:
        busy: the refusal a refused job gets (its kind, or a sentence).
        too_slow: the refusal a job past its time limit gets (its kind, or a sentence).
        max_memory: the address space each worker process may take, in bytes.
    """

    def __init__(
        self,
        *,
        workers: int,
        waiting: int,
        busy: PostRefusal | str,
        too_slow: PostRefusal | str,
        max_memory: int,
    ) -> None:
        self._gate = _Gate(workers, waiting, busy)
        # Free slots, each a process pool of one (None: not started yet), and the jobs
        # waiting for one. Plain containers, not asyncio ones: the pool outlives any one
        # event loop (a test's), and a waiter is woken on its own loop.
        self._free: list[multiprocessing.pool.Pool | None] = [None] * workers
        self._waiters: collections.deque[asyncio.Future[multiprocessing.pool.Pool | None]] = (
            collections.deque()
        )
        self.too_slow = too_slow
        self.max_memory = max_memory
        self._started: list[multiprocessing.pool.Pool] = []
        atexit.register(self.close)

    async def run(self, call: Callable[..., T], *args: Any, timeout_s: float) -> T:
        """``call(*args)`` in a worker process (``call`` and ``args`` must pickle).

        Raises:
            WorkBusyError: the workers are taken and the queue is full.
            WorkTimeoutError: the job took longer; its process was killed.
            MemoryError: the job needed more memory than a worker may take.
        """
        with self._gate.enter():
            pool = await self._slot()
            try:
                pool = pool or self._start()
                return await self._in(pool, call, args, timeout_s)
            except (WorkTimeoutError, asyncio.CancelledError):
                # Its process may still be at the job: killed, not handed to the next.
                self._kill(pool)
                pool = None
                raise
            finally:
                self._give_back(pool)

    async def _slot(self) -> multiprocessing.pool.Pool | None:
        if self._free:
            return self._free.pop()
        waiter: asyncio.Future[multiprocessing.pool.Pool | None]
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed a slot, then cancelled
                self._give_back(waiter.result())
            raise

    def _give_back(self, pool: multiprocessing.pool.Pool | None) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if waiter.done():
                continue
            try:
                waiter.set_result(pool)
                return
            except RuntimeError:  # its event loop is gone
                continue
        self._free.append(pool)

    async def _in(
        self, pool: multiprocessing.pool.Pool, call: Callable[..., T], args: Any, timeout_s: float
    ) -> T:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[T] = loop.create_future()

        def settle(how: Callable[[Any], None], value: Any) -> None:
            if not done.done():
                how(value)

        pool.apply_async(
            call,
            args,
            callback=lambda value: loop.call_soon_threadsafe(settle, done.set_result, value),
            error_callback=lambda exc: loop.call_soon_threadsafe(settle, done.set_exception, exc),
        )
        try:
            return await asyncio.wait_for(done, timeout_s)
        except TimeoutError:
            raise WorkTimeoutError(self.too_slow) from None

    def _start(self) -> multiprocessing.pool.Pool:
        context = multiprocessing.get_context("spawn")
        pool = context.Pool(1, initializer=_limit_memory, initargs=(self.max_memory,))
        self._started.append(pool)
        return pool

    def _kill(self, pool: multiprocessing.pool.Pool | None) -> None:
        if pool is None:
            return
        log.warning("a worker process was killed: its job ran past its limit or was dropped")
        pool.terminate()
        with contextlib.suppress(ValueError):
            self._started.remove(pool)

    def close(self) -> None:
        """Stop every worker process (at exit, or when done with the pool)."""
        for pool in self._started:
            pool.terminate()
        self._started.clear()
