"""Engine slots shared fairly between chats.

A plain semaphore serves waiters first come, first served: a chat that forwards
twenty posts in a row fills the queue, and every other chat waits behind all of
them. :class:`FairSlots` keeps one queue per chat and, each time a slot frees,
serves the chats in turn (round robin), so one busy chat cannot starve the others.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator

__all__ = ["FairSlots"]


class FairSlots:
    """At most ``size`` holders at once; waiters are served one chat at a time, in turn.

    Args:
        size: how many may hold a slot at once.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, not {size}")
        self._free = size
        self._queues: dict[str, deque[asyncio.Future[None]]] = {}
        self._turns: deque[str] = deque()  # chats with waiters, in the order they are served

    @property
    def waiting(self) -> int:
        """How many are waiting for a slot."""
        return sum(len(queue) for queue in self._queues.values())

    @contextlib.asynccontextmanager
    async def slot(self, chat: str) -> AsyncIterator[None]:
        """Hold a slot for the block; ``chat`` is whose turn it counts against."""
        if self._free > 0 and not self._turns:
            self._free -= 1
        else:
            granted = asyncio.get_running_loop().create_future()
            queue = self._queues.setdefault(chat, deque())
            if not queue:
                self._turns.append(chat)
            queue.append(granted)
            try:
                await granted
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():
                    self._release()  # granted, then cancelled before it was used: pass it on
                else:
                    self._forget(chat, granted)
                raise
        try:
            yield
        finally:
            self._release()

    def _forget(self, chat: str, granted: asyncio.Future[None]) -> None:
        queue = self._queues.get(chat)
        if queue is None or granted not in queue:
            return
        queue.remove(granted)
        if not queue:
            del self._queues[chat]
            self._turns.remove(chat)

    def _release(self) -> None:
        while self._turns:
            chat = self._turns.popleft()
            queue = self._queues[chat]
            granted = queue.popleft()
            if queue:
                self._turns.append(chat)  # its next waiter goes to the back of the line
            else:
                del self._queues[chat]
            if not granted.done():
                granted.set_result(None)
                return
        self._free += 1
