"""``/healthz`` and ``/metrics`` of a worker or bot process, on 127.0.0.1 (aiohttp).

``/healthz`` answers 200 with each probe's result when every probe passes, 503
otherwise, so a supervisor or a load balancer takes a replica out of rotation
while its database is away. ``/metrics`` is prometheus-client's text format.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

__all__ = ["Probe", "serving_health"]

#: a named yes/no question about the process ("database", "jobs", …)
Probe = Callable[[], Awaitable[bool]]
PROBE_TIMEOUT_S = 3.0


async def _ask(probe: Probe) -> bool:
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S):
            return bool(await probe())
    except Exception:  # a probe that fails or hangs is a "no"
        return False


@contextlib.asynccontextmanager
async def serving_health(
    port: int, probes: Mapping[str, Probe], *, host: str = "127.0.0.1"
) -> AsyncIterator[int]:
    """Serve ``/healthz`` and ``/metrics`` for the block; ``port`` 0 serves nothing.

    Yields:
        The port listened on (0 when off).
    """
    if port == 0:
        yield 0
        return

    async def healthz(request: web.Request) -> web.Response:
        names = list(probes)
        results = await asyncio.gather(*(_ask(probes[name]) for name in names))
        body = dict(zip(names, results, strict=True))
        return web.json_response(
            {"ok": all(results), "probes": body}, status=200 if all(results) else 503
        )

    async def metrics(request: web.Request) -> web.Response:
        data = await asyncio.to_thread(generate_latest, REGISTRY)
        return web.Response(body=data, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    try:
        yield port
    finally:
        await runner.cleanup()
