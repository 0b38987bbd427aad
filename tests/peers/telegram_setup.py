"""The real Telegram bot (python-telegram-bot) on the fake Bot API, as the end-to-end
tests run it: :func:`telegram_settings` (a store in a test's folder, generous limits,
no progress pacing or chat cooldown), :func:`bot_running` (the bot on a started
service, polling briskly, private chats' messages not paced unless asked) and :func:`fake_bot`
(both on :func:`~peers.fake_checker.fake_service`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from telegram.ext import Application

from bots.common.settings import Settings
from bots.telegram.app import ChatPacedRateLimiter, running_bot
from storage.service import CheckService

from .fake_checker import FakeChecker, fake_service
from .telegram_peer import TOKEN, FakeBotAPI

__all__ = ["SECRET", "bot_running", "fake_bot", "telegram_settings"]

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
) -> AsyncIterator[Application[Any, Any, Any, Any, Any, Any]]:
    """The bot polling ``settings.telegram.base_url`` with :data:`TOKEN` for the block,
    checking with ``service``: a one-second poll, PTB's limits and, by default, no
    pacing of private chats (``chat_burst=0``; else ``chat_burst`` messages at once,
    ``chat_rate`` a second, as :class:`~bots.telegram.app.ChatPacedRateLimiter`); then
    running checks get ``grace_s`` to finish."""
    async with running_bot(
        settings,
        service,
        TOKEN,
        grace_s=grace_s,
        poll_timeout_s=1,
        rate_limiter=ChatPacedRateLimiter(chat_burst=chat_burst, chat_rate=chat_rate),
        allow_private_urls=allow_private_urls,
    ) as application:
        yield application


@contextlib.asynccontextmanager
async def fake_bot(
    settings: Settings,
    checker: FakeChecker,
    *,
    grace_s: float = 5.0,
    chat_burst: int = 0,
    chat_rate: float = 1.0,
) -> AsyncIterator[CheckService]:
    """The service checking with ``checker`` (:func:`~peers.fake_checker.fake_service`)
    and the bot on it (:func:`bot_running`, its private chats paced by ``chat_burst``
    and ``chat_rate``); yields the service."""
    async with (
        fake_service(settings, checker) as service,
        bot_running(settings, service, grace_s=grace_s, chat_burst=chat_burst, chat_rate=chat_rate),
    ):
        yield service
