"""The real Telegram bot (python-telegram-bot) on the fake Bot API, as the end-to-end
tests run it: :func:`telegram_settings` (a store in a test's folder, generous limits,
no progress pacing or chat cooldown), :func:`bot_running` (the bot on a started
service, polling briskly, private chats' messages not paced unless asked) and :func:`fake_bot`
(both on :func:`~peers.fake_checker.fake_service`); :func:`handled`, the point after
which nothing more comes of the updates sent so far."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from telegram.ext import AIORateLimiter, Application

from bots.app.settings import Settings
from bots.app.telegram import ChatPacedRateLimiter, running_bot
from bots.service.checks import CheckService
from bots.telegram.context import TelegramContext
from bots.telegram.refusals import Refusals

from .fake_checker import FakeChecker, fake_service
from .telegram_peer import TOKEN, FakeBotAPI

__all__ = ["SECRET", "bot_running", "fake_bot", "handled", "telegram_settings"]

#: the application of each bot running, by ``id()`` of its service (:func:`handled`)
_RUNNING: dict[int, Application[Any, Any, Any, Any, Any, Any]] = {}

SECRET = "s3cret-for-tests"


def telegram_settings(peer: FakeBotAPI, folder: Path, **sections: dict[str, Any]) -> Settings:
    """Settings for the bot on ``peer`` with its store in ``folder``: ``[storage]``,
    ``[service]`` (100 checks a minute per user and per chat, 1000 a day per user) and
    ``[telegram]`` (the peer's URL, no progress pacing, no chat cooldown). Each of
    ``sections`` is merged over its defaults (``service={"user_per_minute": 2}``), or
    added as it is (``llm={...}``)."""
    data: dict[str, dict[str, Any]] = {
        "storage": {"path": str(folder / "zofia.db"), "secret": SECRET},
        "service": {"user_per_minute": 100, "chat_per_minute": 100, "user_daily": 1000},
        "telegram": {
            "base_url": f"{peer.root}/bot",
            "progress_interval_s": 0,
            "chat_cooldown_s": 0,
        },
    }
    for name, section in sections.items():
        data[name] = {**data.get(name, {}), **section}
    return Settings.model_validate(data)


@contextlib.asynccontextmanager
async def bot_running(
    settings: Settings,
    service: CheckService,
    *,
    grace_s: float = 5.0,
    allow_private_urls: bool = False,
    chat_burst: int = 0,
    chat_rate: float = 1.0,
    rate_limiter: AIORateLimiter | None = None,
    refusal_window_s: float | None = None,
) -> AsyncIterator[Application[Any, Any, Any, Any, Any, Any]]:
    """The bot polling ``settings.telegram.base_url`` with :data:`TOKEN` for the block,
    checking with ``service``: a one-second poll, PTB's limits and, by default, no
    pacing of private chats (``chat_burst=0``; else ``chat_burst`` messages at once,
    ``chat_rate`` a second, as :class:`~bots.app.telegram.ChatPacedRateLimiter`, or
    ``rate_limiter`` itself); then running checks get ``grace_s`` to finish.
    ``refusal_window_s``: how long a chat's first refusal waits for the others of its
    burst (:class:`~bots.telegram.refusals.Refusals`; by default its 1.5 s), for a test
    that is not about bursts."""
    async with running_bot(
        settings,
        service,
        TOKEN,
        grace_s=grace_s,
        poll_timeout_s=1,
        rate_limiter=rate_limiter
        or ChatPacedRateLimiter(chat_burst=chat_burst, chat_rate=chat_rate),
        allow_private_urls=allow_private_urls,
    ) as application:
        if refusal_window_s is not None:
            _context(application).refusals = Refusals(window_s=refusal_window_s)
        _RUNNING[id(service)] = application
        try:
            yield application
        finally:
            _RUNNING.pop(id(service), None)


@contextlib.asynccontextmanager
async def fake_bot(
    settings: Settings,
    checker: FakeChecker,
    *,
    grace_s: float = 5.0,
    chat_burst: int = 0,
    chat_rate: float = 1.0,
    refusal_window_s: float | None = None,
) -> AsyncIterator[CheckService]:
    """The service checking with ``checker`` (:func:`~peers.fake_checker.fake_service`)
    and the bot on it (:func:`bot_running`, its private chats paced by ``chat_burst``
    and ``chat_rate``, its refusals held for ``refusal_window_s``); yields the service."""
    async with (
        fake_service(settings, checker) as service,
        bot_running(
            settings,
            service,
            grace_s=grace_s,
            chat_burst=chat_burst,
            chat_rate=chat_rate,
            refusal_window_s=refusal_window_s,
        ),
    ):
        yield service


def _context(application: Application[Any, Any, Any, Any, Any, Any]) -> TelegramContext:
    ctx = application.bot_data["zofia"]
    assert isinstance(ctx, TelegramContext)
    return ctx


async def handled(peer: FakeBotAPI, service: CheckService, *, timeout_s: float = 20.0) -> None:
    """Return once the bot running on ``service`` has handled every update put on
    ``peer``'s queue so far, and the work its handlers started in the background (checks,
    answers, refusals) is over: from then on nothing more comes of those updates, so a
    test may assert that something was not said. The bot handles updates concurrently,
    so a later update's answer is no such point.

    It waits until the bot has fetched them (its next ``getUpdates`` confirms them), its
    update queue has none left unfinished (PTB marks each done once its handlers
    returned) and none of its background tasks is left; bounded by ``timeout_s``."""
    application = _RUNNING[id(service)]
    ctx = _context(application)
    last = peer.last_update_id
    async with asyncio.timeout(timeout_s):
        await peer.wait_for(lambda: peer.confirmed >= last, timeout_s)
        await application.update_queue.join()
        while ctx.checks:
            await asyncio.wait(set(ctx.checks))
