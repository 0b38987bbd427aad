"""What every long-running bot needs around the engine: a started check service
with its daily purge, and the post a chat message stands for."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import re
from collections.abc import AsyncIterator, Callable

from storage.opening import open_store
from storage.service import CheckService
from zofia_engine.config import Settings
from zofia_engine.engine import Engine
from zofia_engine.fetch import fetch_article
from zofia_engine.post import Post

__all__ = ["post_from_message", "running_service"]

log = logging.getLogger(__name__)

_ONLY_A_URL = re.compile(r"\s*(https?://\S+)\s*", re.IGNORECASE)
_FIRST_URL = re.compile(r"https?://[^\s<>\"']+", re.IGNORECASE)


async def _purge_periodically(service: CheckService, every_s: float) -> None:
    while True:
        await asyncio.sleep(every_s)
        try:
            await asyncio.to_thread(service.purge_expired)
        except Exception:  # a failed purge must not stop the bot; the next one retries
            log.exception("purging expired checks failed")


@contextlib.asynccontextmanager
async def running_service(
    settings: Settings,
    *,
    engine: Engine | None = None,
    purge_every_s: float = 86_400.0,
    clock: Callable[[], dt.datetime] | None = None,
) -> AsyncIterator[CheckService]:
    """A loaded engine behind a started :class:`CheckService`, for a bot's lifetime.

    Checks a crash left unfinished are resumed; expired post text and evidence are
    purged at start and every ``purge_every_s``. On exit, checks still running go
    back to the queue (the next start resumes them) and everything is closed.

    Args:
        engine: an engine to use (tests pass one wired to fake servers); by default
            one is built from ``settings`` and closed on exit.
    """
    own_engine = engine is None
    engine = engine if engine is not None else Engine(settings)
    try:
        await engine.load()
        store, secret = open_store(settings.storage, clock=clock)
        service = CheckService(
            engine,
            store,
            settings.service,
            secret=secret,
            clock=clock,
            retention=dt.timedelta(days=settings.storage.retention_days),
        )
        resumed = await service.start(resume=True)
        if resumed:
            log.info("resumed %d unfinished checks", len(resumed))
        purge = asyncio.create_task(_purge_periodically(service, purge_every_s))
        try:
            yield service
        finally:
            purge.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await purge
            await service.aclose()
            store.db.close()
    finally:
        if own_engine:
            await engine.aclose()


async def post_from_message(
    text: str,
    *,
    published: dt.date | None = None,
    origin: str = "",
    language: str = "",
    allow_private_urls: bool = False,
) -> Post:
    """The post a chat message stands for.

    A message that is only a link is fetched and its article checked (private and
    local addresses refused unless ``allow_private_urls``); any other text is
    checked as it is, with its first link kept as the post's URL. ``language`` is
    the language the panel answers in (empty: English).

    Raises:
        InvalidPostError: the link cannot be fetched or holds no article.
    """
    only = _ONLY_A_URL.fullmatch(text)
    if only is None:
        first = _FIRST_URL.search(text)
        return Post(
            text=text,
            url=first.group(0) if first else "",
            published=published,
            origin=origin,
            language=language,
        )
    article = await fetch_article(only.group(1), allow_private=allow_private_urls)
    return article.as_post(published=published, origin=origin, language=language)
