"""Which key a request brings, and what each key may ask a minute.

A key is looked up in the store only when its keyed hash is among the hashes of the
keys not revoked (:meth:`~storage.api_keys.ApiKeys.active_hashes`). :class:`KnownKeys`
reads those hashes in one query, and reads them again only when a request brings a hash
it does not know and its copy is older than :data:`FRESH_S`. So a flood of made-up keys
costs at most one store read in that time, not one each, and never queues ahead of a
real key's requests on the store's threads. A key made while the server runs is taken
within :data:`FRESH_S`; a key revoked is refused at its next request (a known key is
still looked up each time: its name, and whether it was revoked since).

Once known, a key has its own bucket of requests a minute (``[api] key_per_minute``,
:class:`~bots.web.clients.ClientLimits` under the key's name): polls count as posts do.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from aiohttp import web
from aiohttp.typedefs import Middleware

from bots.web.clients import ClientLimits

from .refusal import Refusal, too_many

__all__ = ["FRESH_S", "KEY_NAME", "KNOWN_KEYS", "KnownKeys", "authenticated"]

#: how long the copy of the active keys' hashes may say that a key is unknown
FRESH_S = 5.0
#: the request's key, by its name (what its checks are asked under)
KEY_NAME: web.RequestKey[str] = web.RequestKey("key", str)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Keys(Protocol):
    """The store's keys, as the service reads them
    (:class:`bots.service.api_keys.ApiKeyReads`)."""

    def hash_of(self, key: str) -> str | None: ...

    async def name_of(self, key: str) -> str | None: ...

    async def active_hashes(self) -> frozenset[str]: ...


class KnownKeys:
    """The keys a server takes (see the module's docstring).

    Args:
        keys: the store's keys.
        fresh_s: how long a copy of the active keys' hashes is trusted.
        clock: monotonic seconds (a test's own, to step past ``fresh_s``).

    Attributes:
        reads: how many times the active keys' hashes were read (a bound on work a test
            can assert).
    """

    def __init__(
        self,
        keys: Keys,
        *,
        fresh_s: float = FRESH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.keys = keys
        self.fresh_s = fresh_s
        self.clock = clock
        self.reads = 0
        self._hashes: frozenset[str] = frozenset()
        self._read_at = -math.inf
        self._reading = asyncio.Lock()

    async def name_of(self, key: str) -> str | None:
        """The name of ``key`` if it is a key not revoked, else ``None``."""
        digest = self.keys.hash_of(key)
        if digest is None or not await self._known(digest):
            return None
        return await self.keys.name_of(key)

    async def _known(self, digest: str) -> bool:
        if digest in self._hashes:
            return True
        async with self._reading:  # one read for every request that waits here
            if self.clock() - self._read_at >= self.fresh_s:
                self._hashes = await self.keys.active_hashes()
                self._read_at = self.clock()
                self.reads += 1
        return digest in self._hashes


#: the keys an API server takes
KNOWN_KEYS: web.AppKey[KnownKeys] = web.AppKey("known_keys", KnownKeys)


def authenticated(known: KnownKeys, per_key: ClientLimits, *, open_path: str) -> Middleware:
    """The middleware that names each request's key (``request[KEY_NAME]``) and counts
    it against the key's rate; every route but ``open_path`` needs a key."""

    @web.middleware
    async def authenticate(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path == open_path:
            return await handler(request)
        scheme, _, key = request.headers.get("Authorization", "").partition(" ")
        challenge = {"WWW-Authenticate": 'Bearer realm="zofia"'}
        if scheme.lower() != "bearer" or not key.strip():
            raise Refusal(
                401, "No API key: send it as the header Authorization: Bearer <key>.", challenge
            )
        name = await known.name_of(key.strip())
        if name is None:
            raise Refusal(401, "This API key is unknown or revoked.", challenge)
        if not await per_key.admit(name):
            wait = per_key.retry_after_s
            raise too_many(
                f"This key made its {per_key.per_minute} requests of the last minute;"
                f" try again in {wait} s.",
                wait,
            )
        request[KEY_NAME] = name
        return await handler(request)

    return authenticate
