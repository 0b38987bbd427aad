"""The composition root: the engine, the store and the check service, built one way
for the CLI, both bots, the bench scripts and the tests."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import signal
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from functools import partial
from typing import TYPE_CHECKING

from bots.app.json_logs import json_lines_beside_workers
from bots.chat.logs import cap_client_logs
from bots.service.checks import CheckService, EnginePorts, ServiceSetup
from bots.service.delivery import DeliveryFactory
from bots.service.local import LocalDelivery
from bots.service.queue.corrections import queue_corrections
from bots.service.queue.delivery import QueuedDelivery
from bots.service.records import QueueDue
from storage.opening import open_store
from storage.store import CheckStore
from zofia_engine.errors import ZofiaError
from zofia_engine.ports import TextEncoder

from .settings import Settings

if TYPE_CHECKING:
    from zofia_engine.engine import Engine

__all__ = [
    "StartupError",
    "build_service",
    "queue_due_for",
    "run_until_stopped",
    "running_service",
    "serving_with_site",
    "stop_on_signals",
]

log = logging.getLogger(__name__)


def build_service(
    settings: Settings,
    checker: EnginePorts,
    encoder: TextEncoder,
    *,
    clock: Callable[[], dt.datetime] | None = None,
) -> CheckService:
    """A check service over the store the settings name (opened and migrated now),
    keeping post text for ``storage.retention_days``. Start it with ``await start()``.

    The deployment's mode is decided here, once: with the store on PostgreSQL the service
    delivers through a :class:`QueuedDelivery` (``zofia worker`` processes run the engine,
    and ``checker`` here only reads posts), else through a :class:`LocalDelivery`."""
    store, secret = open_store(settings.storage, clock=clock)
    cap_client_logs()  # and the platforms' clients log no raw id at DEBUG
    held = settings.service.max_pending_checks * settings.engine.llm.max_tokens_per_check
    if 0 < settings.service.daily_token_budget < held:
        log.warning(
            "service.daily_token_budget (%d) holds only %d checks' reserves of"
            " llm.max_tokens_per_check at once, fewer than service.max_pending_checks (%d)",
            settings.service.daily_token_budget,
            settings.service.daily_token_budget // settings.engine.llm.max_tokens_per_check,
            settings.service.max_pending_checks,
        )
    delivery: DeliveryFactory = LocalDelivery
    if settings.queued:
        delivery = partial(QueuedDelivery, queue=settings.queue)
    setup = ServiceSetup(
        secret,
        settings.engine.llm.max_tokens_per_check,
        encoder,
        delivery,
        retention=dt.timedelta(days=settings.storage.retention_days),
        clock=clock,
    )
    return CheckService(checker, store, settings.service, setup)


def queue_due_for(settings: Settings, store: CheckStore) -> QueueDue:
    """How a change made outside a service (``zofia review``) queues the corrections of
    the cards it made due: a ``correct`` job each on the queue, or nothing in the local
    mode (the running bot's poll of the store finds them)."""

    def queue_due(due: dict[str, list[str]]) -> None:
        if settings.queued:
            for original_id, platforms in due.items():
                queue_corrections(store.postgres(), original_id, platforms)

    return queue_due


async def _purge_periodically(service: CheckService, every_s: float) -> None:
    while True:
        await asyncio.sleep(every_s)
        try:
            await service.purge_expired()
        except Exception:  # a failed purge must not stop the bot; the next one retries
            log.exception("purging expired checks failed")


@contextlib.asynccontextmanager
async def running_service(
    settings: Settings,
    *,
    engine: Engine | None = None,
    load: bool = True,
    resume: bool = True,
    purge_every_s: float | None = 86_400.0,
    clock: Callable[[], dt.datetime] | None = None,
) -> AsyncIterator[CheckService]:
    """A loaded engine behind a started :class:`CheckService`, for a process's lifetime.

    Expired post text and evidence are purged at start and every ``purge_every_s``
    (``None``: at start only, for a one-shot command). With ``resume``, checks a crash
    left unfinished are taken up. On exit, checks still running go back to the queue
    (the next start resumes them) and everything is closed.

    Args:
        engine: an engine to use (tests pass one wired to fake servers); by default
            one is built from ``settings`` and closed on exit.
        load: load every model now (a bot, before its first update); otherwise each
            loads when first used (a one-shot command that may need none). With the
            store on PostgreSQL the workers hold the models, and a bot loads none
            up front.
    """
    from zofia_engine.engine import Engine

    own_engine = engine is None
    engine = engine if engine is not None else Engine(settings.engine)
    try:
        if load and not settings.queued:
            await engine.load()
        service = build_service(settings, engine, engine.retrieval.encoder, clock=clock)
        resumed = await service.start(resume=resume)
        if resumed:
            log.info("resumed %d unfinished checks", len(resumed))
        purge = (
            asyncio.create_task(_purge_periodically(service, purge_every_s))
            if purge_every_s is not None
            else None
        )
        try:
            yield service
        finally:
            if purge is not None:
                purge.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await purge
            await service.aclose()
            # Store calls still under way on their threads end first (a connection
            # closed under a statement may crash SQLite), off the loop.
            await asyncio.to_thread(service.store.close)
    finally:
        if own_engine:
            await engine.aclose()


@contextlib.asynccontextmanager
async def serving_with_site(
    settings: Settings, *, engine: Engine | None = None
) -> AsyncIterator[CheckService]:
    """A bot's :func:`running_service`, with the report site served beside it."""
    # Imported here: the CLI's checks and reviews use this module and serve no site.
    from bots.web.app import site_beside_bot

    async with (
        running_service(settings, engine=engine) as service,
        site_beside_bot(
            service.pages, settings.site, retention_days=settings.storage.retention_days
        ),
    ):
        yield service


def run_until_stopped(settings: Settings, main: Coroutine[None, None, None]) -> None:
    """Run a bot's ``main`` to its end (blocking), logging JSON lines beside the workers
    in a queued deployment; what ``main`` raises is the caller's to say."""
    if settings.queued:
        json_lines_beside_workers()
    # KeyboardInterrupt: before the signals were taken over, so nothing was taken yet
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main)


@contextlib.contextmanager
def stop_on_signals(stop: asyncio.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set ``stop`` while the block runs, on the running loop (a bot
    then stops taking work and hands back what it took: :mod:`bots.chat.in_flight`),
    instead of interrupting whatever runs; the handlers from before are back after it."""
    loop = asyncio.get_running_loop()
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in before:
        loop.add_signal_handler(sig, stop.set)
    try:
        yield
    finally:
        for sig, handler in before.items():
            loop.remove_signal_handler(sig)
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)


class StartupError(ZofiaError):
    """A bot could not start (no network, a refused token, missing intents); the
    message says so in one sentence, never with the token."""
