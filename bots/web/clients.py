"""Requests a minute per client: one rule for the report pages and the HTTP API.

A client is its address (:func:`client_address`): the connection's, or the last one a
reverse proxy put in ``X-Forwarded-For`` when the server is told to trust it. Its bucket
(:func:`client_bucket`) is an IPv4 address by itself, an IPv6 address by its /64 (one
subscriber's whole network, which it may spread its requests over). Each bucket may
make a number of requests a minute (:class:`ClientLimits`, a leaky bucket of
aiolimiter's); past the rate a request is refused at once, never queued, so a flood
holds no memory and no task while it waits.

The API counts its keys with the same :class:`ClientLimits`, a key's name as its bucket.
"""

from __future__ import annotations

import ipaddress
import math

from aiohttp import web
from aiolimiter import AsyncLimiter

__all__ = ["MAX_CLIENTS", "ClientLimits", "client_address", "client_bucket"]

#: buckets kept before the full ones are dropped (a bucket at rest holds nothing)
MAX_CLIENTS = 10_000


def client_bucket(address: str) -> str:
    """The rate-limit bucket of a client address: an IPv6 address by its /64 (one
    subscriber's whole network, which it may spread requests over), an IPv4 address
    by itself; anything else as given."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


def client_address(request: web.Request, *, forwarded_for: bool) -> str:
    """Where ``request`` comes from: the connection's address, or (``forwarded_for``:
    behind a proxy that sets it) the last address of ``X-Forwarded-For``."""
    if forwarded_for:
        forwarded = request.headers.get("X-Forwarded-For", "")
        last = forwarded.rsplit(",", 1)[-1].strip()
        if last:
            return last
    return request.remote or "unknown"


class ClientLimits:
    """Requests a minute per bucket, refused (not queued) past the rate.

    Args:
        per_minute: what each bucket may make a minute; a bucket at rest may make them
            all at once.
    """

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._buckets: dict[str, AsyncLimiter] = {}

    @property
    def retry_after_s(self) -> int:
        """When a refused bucket may make its next request: one request's share of the
        minute, in whole seconds (``Retry-After``)."""
        return math.ceil(60 / self.per_minute)

    async def admit(self, bucket: str) -> bool:
        """Count one request of ``bucket``; ``False`` (nothing counted) past its rate."""
        if len(self._buckets) > MAX_CLIENTS:
            for name, limiter in list(self._buckets.items()):
                if limiter.has_capacity(limiter.max_rate):
                    del self._buckets[name]
        if bucket not in self._buckets:
            self._buckets[bucket] = AsyncLimiter(self.per_minute, 60)
        limiter = self._buckets[bucket]
        if not limiter.has_capacity():
            return False
        await limiter.acquire()  # there is capacity: taken at once, without waiting
        return True
