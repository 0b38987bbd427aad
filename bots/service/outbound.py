"""Calls the service makes to addresses its users name (the HTTP API's webhooks), held
to the same guard as a link post's fetch (:mod:`zofia_engine.fetch`): an address given
must be https on the public internet, and every connection goes through the resolver
that drops private, loopback and link-local addresses, so that no name can be made to
reach the deployment's own network, whatever it resolves to when it is used."""

from __future__ import annotations

import aiohttp
from aiohttp.abc import AbstractResolver
from yarl import URL

from zofia_engine.fetch import GuardedResolver, refusal_kind

__all__ = ["address_refusal", "guarded_session"]


def address_refusal(url: str, *, allow_private: bool) -> str | None:
    """Why ``url`` may not be called, in one sentence; ``None`` when it may (the names
    it resolves to are checked on every connection). ``allow_private`` takes http and
    local addresses too (tests on 127.0.0.1)."""
    try:
        parsed = URL(url)
    except ValueError:
        return "The address is not a web address."
    host = (parsed.host or "").rstrip(".").lower()
    if parsed.scheme != "https" and not (allow_private and parsed.scheme == "http"):
        return "The address must be an https address."
    local = host == "localhost" or host.endswith(".localhost")
    literal = refusal_kind(host.strip("[]")) if any(c.isdigit() for c in host) else None
    if not host or ((local or literal not in (None, "not an IP address")) and not allow_private):
        return "The address must be on the public internet."
    return None


def guarded_session(*, allow_private: bool, timeout_s: float) -> aiohttp.ClientSession:
    """A client session whose connections reach public addresses only (all of them with
    ``allow_private``), each request bounded by ``timeout_s``."""
    inner = aiohttp.ThreadedResolver()
    resolver: AbstractResolver = inner if allow_private else GuardedResolver(inner)
    connector = aiohttp.TCPConnector(resolver=resolver, use_dns_cache=False)
    return aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=timeout_s)
    )
