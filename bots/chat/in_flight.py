"""The work a bot has taken and not finished, held so that a shutdown can wait for it.

Both bots stop the same way on SIGINT or SIGTERM (:mod:`bots.app.runtime`): they stop
taking work (a request that comes then is told the bot is restarting, one sentence),
give the checks they took a grace period to finish (``--grace``, ``[service]
shutdown_grace_s``), then cancel what is left. A check cancelled then says so itself,
while the platform's connection is still open (:func:`~.check_flow.run_check`: a check
submitted goes back to the queue and resumes at the next start; a request not yet
submitted is simply not kept), and only then does the bot close its connection.
:class:`InFlight` is that work: Telegram spawns each check into it
(:meth:`InFlight.spawn`); a Discord command holds its place in it while it runs
(:meth:`InFlight.hold`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Iterator
from typing import Any

__all__ = ["InFlight"]

log = logging.getLogger(__name__)


class InFlight:
    """The tasks a bot is running for its users (checks, answers, their last edits), and
    whether it still takes new ones."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()
        #: shutdown has begun: no new work is taken
        self.closing = False

    def __len__(self) -> int:
        return len(self.tasks)

    def add(self, task: asyncio.Task[Any]) -> None:
        """Hold ``task`` until it ends: shutdown waits for it, then cancels it."""
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def spawn(self, work: Coroutine[Any, Any, None]) -> bool:
        """Run ``work`` in the background, held (:meth:`add`).

        Returns:
            ``False`` once shutdown has begun: ``work`` is closed unstarted, and the
            caller tells the user to send it again.
        """
        if self.closing:
            work.close()
            return False
        self.add(asyncio.get_running_loop().create_task(work))
        return True

    @contextlib.contextmanager
    def hold(self) -> Iterator[bool]:
        """Hold the running task for the block (a command handled in a task the platform's
        library made). Yields ``False`` once shutdown has begun: the caller takes no
        work then and tells the user to send it again."""
        task = asyncio.current_task()
        if self.closing or task is None:
            yield False
            return
        self.tasks.add(task)
        try:
            yield True
        finally:
            self.tasks.discard(task)

    async def drain(self, grace_s: float) -> None:
        """Take no new work from now on, let what is running finish for ``grace_s``, then
        cancel the rest and wait for their last words (a cancelled check still tells its
        user). Returns when nothing is left; never raises."""
        self.closing = True
        await asyncio.sleep(0)  # a task spawned last starts: cancelled, it can still speak
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace_s
        if self.tasks:
            log.info("waiting up to %.0f s for %d running checks", grace_s, len(self.tasks))
        while self.tasks:
            pending = set(self.tasks)
            left = deadline - loop.time()
            if left > 0:
                _, pending = await asyncio.wait(pending, timeout=left)
                continue  # a task ended: look again (one may have started another)
            log.info("handing back %d checks not finished within the grace", len(pending))
            for task in pending:
                task.cancel()
            await asyncio.wait(pending)
