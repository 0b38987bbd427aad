"""What bounds the API's work before a check is taken: the client's address, and the
bodies read at once.

Before its key is read, a request counts against its client's bucket (``[api]
per_minute``; the report pages' one rule, :mod:`bots.web.clients`: an IPv4 address, an
IPv6 /64). Past it the request is refused with a 429 before anything else is done for
it. A post's body is read and parsed only in one of ``[api] max_bodies`` slots
(:class:`BodySlots`): up to ``max_body_bytes`` each, read, decoded and validated, they
are what the API holds in memory and spends its CPU on; a post that finds every slot
taken and :data:`WAITING_PER_SLOT` times as many waiting is refused before it is read.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

from bots.web.clients import ClientLimits, client_address, client_bucket

from .refusal import too_many

__all__ = ["RETRY_BODY_S", "WAITING_PER_SLOT", "BodySlots", "address_limit"]

#: how many posts may wait for each slot before one is refused unread
WAITING_PER_SLOT = 4
#: the wait a post refused for want of a slot is told (Retry-After)
RETRY_BODY_S = 2
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def address_limit(limits: ClientLimits, *, forwarded_for: bool) -> Middleware:
    """The middleware that counts each request against its client's bucket first."""

    @web.middleware
    async def limit(request: web.Request, handler: Handler) -> web.StreamResponse:
        bucket = client_bucket(client_address(request, forwarded_for=forwarded_for))
        if not await limits.admit(bucket):
            wait = limits.retry_after_s
            raise too_many(f"Too many requests from your address; try again in {wait} s.", wait)
        return await handler(request)

    return limit


class BodySlots:
    """At most ``slots`` bodies read and parsed at once (see the module's docstring).

    Attributes:
        busiest: the most slots ever held at once (a bound on work a test can assert).
    """

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.busiest = 0
        self._free = asyncio.Semaphore(slots)
        self._held = 0
        self._waiting = 0

    @property
    def waiting(self) -> int:
        """How many posts wait for a slot now."""
        return self._waiting

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold a slot while the block runs; wait for one if a place in the line is free.

        Raises:
            Refusal: a 429, when every slot is taken and the line is full.
        """
        if self._free.locked() and self._waiting >= WAITING_PER_SLOT * self.slots:
            raise too_many(
                "Too many posts are being read at once; send this one again in a few seconds.",
                RETRY_BODY_S,
            )
        self._waiting += 1
        try:
            await self._free.acquire()
        finally:
            self._waiting -= 1
        self._held += 1
        self.busiest = max(self.busiest, self._held)
        try:
            yield
        finally:
            self._held -= 1
            self._free.release()
