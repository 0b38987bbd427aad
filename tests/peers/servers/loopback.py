"""The base of every fake protocol peer: an aiohttp app on an ephemeral 127.0.0.1 port."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Self, TypeVar

from aiohttp import web

__all__ = ["LoopbackServer", "running_in_thread"]


class LoopbackServer:
    """Starts and stops an aiohttp application on loopback; subclasses add routes.

    Use as ``async with Peer() as peer:``. ``release`` is set on close, so
    answers held back to provoke client timeouts are let go at once and the
    server stops promptly.
    """

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def root(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def add_routes(self, app: web.Application) -> None:
        """Register the peer's handlers on ``app``."""
        raise NotImplementedError

    async def start(self) -> None:
        """Listen on an ephemeral port of 127.0.0.1."""
        app = web.Application()
        self.add_routes(app)
        self._runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Release held answers and stop listening."""
        self.release.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


Server = TypeVar("Server", bound=LoopbackServer)


@contextlib.contextmanager
def running_in_thread(server: Server) -> Iterator[Server]:
    """Serve ``server`` from its own event loop in a thread, for code that runs its own
    loop (a CLI under click's runner). Stopped and joined on exit."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout=10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
