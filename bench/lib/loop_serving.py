"""Not a bench script: the bot side of ``bench/loop_stall.py`` (``bench/lib/`` holds such
helpers): the ticker that keeps the loop's longest stall (and the longest garbage
collection), and the requests a bot serves meanwhile, with what they came to."""

from __future__ import annotations

import asyncio
import collections
import gc
import sys
import time
from collections.abc import Awaitable
from typing import Any

# The repository is on sys.path (for the tests package): bench/loop_stall.py puts it there first.
from tests.loop_watch import LoopWatch

from bots.service.checks import CheckService
from bots.service.records import Message, Requester

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
    """The requests a bot serves, through the check service's front door."""

    def __init__(self, service: CheckService) -> None:
        self.service = service
        self.sent = 0

    async def check(self, n: int) -> None:
        """A new post to check: admitted, submitted and (run here on SQLite) answered."""
        who = Requester("telegram", f"user-{n}", f"user-{n}", private=True)
        topic = TOPICS[n % len(TOPICS)]
        text = f"BREAKING: the city will close its {topic} number {n} for {n % 9 + 2} years."
        async with self.service.take(Message(text), who) as handle:
            if not handle.delivered_elsewhere:  # queued, the workers check it; none runs here
                await handle.result()

    async def read_settings(self, n: int) -> None:
        defaults = {"autocheck": False, "language": "", "confidence": 60}
        await self.service.chats.settings("telegram", f"group-{n}", defaults)

    async def write_settings(self, n: int) -> None:
        await self.service.chats.set_settings("telegram", f"group-{n}", {"autocheck": n % 2 == 0})

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
