""":class:`SteppedPacer`: the bot's real :class:`~bots.telegram.pacing.ChatPacedRateLimiter`,
its private chats' turns given by the test instead of the clock.

A test of the pacer's order (the card first, a stale progress edit dropped) needs every
request of a chat queued before the chat's next turn comes. With turns a second apart
that is a race the machine's speed decides; here the chat's rate is so slow that no
turn comes by the clock within a test (one message in :data:`NEVER_S`), and the test
gives each turn itself (:meth:`SteppedPacer.next_turn`) once it has seen what it needs
queued (:meth:`SteppedPacer.until`). The queues, their priorities and the dropping of
stale edits are the pacer's own; only the time a turn takes is the test's.

A turn is the pacer's own :meth:`~bots.telegram.pacing.ChatPacedRateLimiter.next_turn`
(the chat's token bucket leaking one token, as the clock would make it).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from bots.telegram.pacing import ChatPacedRateLimiter

__all__ = ["NEVER_S", "SteppedPacer"]

#: how long a private chat waits for its next turn by the clock: longer than any test
NEVER_S = 3600.0


class SteppedPacer(ChatPacedRateLimiter):
    """The pacer with ``chat_burst`` messages at once per private chat, and every later
    turn given by :meth:`next_turn`.

    Attributes:
        inside: the requests in the pacer now, as ``(endpoint, data)``: waiting for
            their turn, or on their way (a dropped one leaves at once).
    """

    def __init__(self, *, chat_burst: int = 1) -> None:
        super().__init__(chat_burst=chat_burst, chat_rate=1 / NEVER_S)
        self.inside: list[tuple[str, dict[str, Any]]] = []

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, Any]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> Any:
        entry = (endpoint, data)
        self.inside.append(entry)
        try:
            return await super().process_request(
                callback, args, kwargs, endpoint, data, rate_limit_args
            )
        finally:
            self.inside.remove(entry)

    @contextlib.asynccontextmanager
    async def stepping(self) -> AsyncIterator[SteppedPacer]:
        """The block's turns are given by the test; once it ends (or fails), every request
        left goes at once (:meth:`unpaced`), so that the bot's shutdown never waits for a
        turn. Enter it inside the bot's block."""
        try:
            yield self
        finally:
            self.unpaced()

    async def until(self, condition: Callable[[], Any], timeout_s: float = 20.0) -> Any:
        """Wait until ``condition()`` (on :attr:`inside`, or on the test's tasks) is truthy;
        return it. Bounded by ``timeout_s``: a pacer that never gets there fails the test."""
        async with asyncio.timeout(timeout_s):
            while not (found := condition()):
                await asyncio.sleep(0.005)
            return found
