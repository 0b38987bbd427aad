"""Bot replicas taking their platform's ``deliver`` jobs, when checks run on workers.

With the store on PostgreSQL every bot process takes jobs from its platform's deliver
queue while it runs, so a card is posted by whichever replica is alive when its check
ends. On SQLite the bot posts each card itself, as it always did, and this does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator

from storage.queue.jobs import deliver_queue, make_app
from storage.queue.metrics import DELIVERIES
from storage.queue.worker import PostCard, register_deliver_task, run_jobs
from storage.service import CheckService

from .health import serving_health
from .settings import Settings

__all__ = ["DELIVERY_CONCURRENCY", "delivering"]

#: cards one bot process posts at once (each is one or two Bot API calls)
DELIVERY_CONCURRENCY = 8


@contextlib.asynccontextmanager
async def delivering(
    settings: Settings, service: CheckService, platform: str, post_card: PostCard
) -> AsyncIterator[None]:
    """Take ``platform``'s deliver jobs for the block (queued service only)."""
    if service.delivery is None:
        yield
        return
    app = make_app(settings.storage.url, max_connections=DELIVERY_CONCURRENCY + 2)
    register_deliver_task(app, service.store, platform, post_card, settings.queue)
    name = f"{platform}-bot@{socket.gethostname()}:{os.getpid()}"
    async with app.open_async():
        jobs = asyncio.create_task(
            run_jobs(
                app,
                [deliver_queue(platform)],
                settings.queue,
                concurrency=DELIVERY_CONCURRENCY,
                name=name,
            )
        )

        async def database() -> bool:
            await asyncio.to_thread(service.store.db.execute, "SELECT 1")
            return True

        async def taking_deliveries() -> bool:
            return not jobs.done()

        DELIVERIES.labels(platform=platform)  # the series exists from the start, at 0
        probes = {"database": database, "deliveries": taking_deliveries}
        try:
            async with serving_health(settings.queue.health_port, probes):
                yield
        finally:
            jobs.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await jobs
