"""Bot replicas taking their platform's ``deliver`` jobs, when checks run on workers.

With the store on PostgreSQL every bot process takes jobs from its platform's deliver
queue while it runs, so a card is posted by whichever replica is alive when its check
ends; the same queue brings the ``correct`` jobs of verdicts a moderator changed, and
the periodic look that queues them again for chats whose send failed once its backoff
is over (:mod:`bots.service.queue.corrections`). On
SQLite the bot posts each card itself, as it always did, and looks for corrections due
by polling the store (:func:`~.corrections.correcting`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator
from functools import partial

from bots.chat.corrections import SendCorrection, correct_check, correcting
from bots.service.checks import CheckService
from bots.service.queue.corrections import register_correct_tasks
from bots.service.queue.jobs import deliver_queue, make_app
from bots.service.queue.metrics import DELIVERIES
from bots.service.queue.worker import PostCard, register_deliver_task, run_jobs

from .health import serving_health
from .settings import Settings

__all__ = ["DELIVERY_CONCURRENCY", "delivering"]

#: cards one bot process posts at once (each is one or two Bot API calls)
DELIVERY_CONCURRENCY = 8


@contextlib.asynccontextmanager
async def delivering(
    settings: Settings,
    service: CheckService,
    platform: str,
    post_card: PostCard,
    correct: SendCorrection | None = None,
) -> AsyncIterator[None]:
    """Take ``platform``'s deliver jobs, and with ``correct`` its correct jobs, for the
    block (queued service); with the local service, send the corrections due that a
    poll of the store finds (given ``correct``)."""
    if service.delivery is None:
        if correct is None:
            yield
            return
        async with correcting(service, platform, correct):
            yield
        return
    app = make_app(settings.storage.url, max_connections=DELIVERY_CONCURRENCY + 2)
    register_deliver_task(app, service.store, platform, post_card, settings.queue)
    if correct is not None:
        corrections = partial(correct_check, service, platform, send=correct)
        register_correct_tasks(app, service.store, platform, corrections, settings.queue)
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
            await asyncio.to_thread(service.store.ping)
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
