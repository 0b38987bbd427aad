"""Work done in rounds while a block runs: the local mode's look for corrections due, the
API's webhook calls."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

__all__ = ["every"]

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def every(
    seconds: Callable[[], float], work: Callable[[], Awaitable[object]], what: str
) -> AsyncIterator[None]:
    """Run ``work`` every ``seconds()`` seconds while the block runs, the first round after
    the first wait; a round that fails is logged (as ``what`` failing) and the next tries
    again. The rounds stop with the block, on cancellation too."""

    async def rounds() -> None:
        while True:
            await asyncio.sleep(seconds())
            try:
                await work()
            except Exception:  # the next round tries again
                log.exception("%s failed", what)

    task = asyncio.create_task(rounds())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
