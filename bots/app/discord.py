"""Running the Discord bot: the service and the client, and start-up failures said
in one sentence."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from typing import TYPE_CHECKING

import aiohttp
import discord

from bots.app.deliveries import delivering
from bots.app.runtime import StartupError, run_until_stopped, serving_with_site, stop_on_signals
from bots.app.settings import Settings
from bots.chat.corrections import sender
from bots.discord.chats import PLATFORM
from bots.discord.client import FactCheckBot
from bots.discord.corrections import send_correction
from bots.discord.deliveries import post_delivered

if TYPE_CHECKING:
    from zofia_engine.engine import Engine

__all__ = ["run_bot", "run_discord", "startup_failure", "token_from_env"]

log = logging.getLogger(__name__)


def token_from_env(settings: Settings, environ: dict[str, str] | None = None) -> str:
    """The bot token from the environment variable the settings name.

    Raises:
        StartupError: the variable is unset or empty (its name is said, never a value).
    """
    name = settings.discord.token_env
    token = (os.environ if environ is None else environ).get(name, "").strip()
    if not token:
        raise StartupError(
            f"set ${name} to the bot token (Developer Portal → your application → Bot)"
        )
    return token


async def run_bot(
    settings: Settings, token: str, *, grace_s: float | None = None, engine: Engine | None = None
) -> None:
    """Run the bot until SIGINT or SIGTERM: the service, then the client on top of it;
    then it stops taking checks, gives those it took ``grace_s`` (``[service]
    shutdown_grace_s`` by default) to finish, and hands back the rest, each asker told
    (:meth:`FactCheckBot.stop`).

    The token and the connection are tried first, before any model loads, so that a
    bad token or no network fails in a second.
    """
    grace = settings.service.shutdown_grace_s if grace_s is None else grace_s
    probe = discord.Client(intents=discord.Intents(guilds=True))
    try:
        await probe.login(token)
    finally:
        await probe.close()
    stop = asyncio.Event()
    with stop_on_signals(stop):
        async with (
            serving_with_site(settings, engine=engine) as service,
            FactCheckBot(
                settings.discord,
                service,
                images=settings.engine.images,
                audio=settings.engine.audio,
                public_url=settings.site.public_url,
            ) as bot,
        ):
            running = asyncio.create_task(bot.start(token))
            async with delivering(
                settings,
                service,
                PLATFORM,
                functools.partial(post_delivered, bot.context, bot),
                sender(functools.partial(send_correction, bot.context, bot)),
            ):
                await _until(stop, running)
            if not running.done():
                log.info("stopping: no new checks; running checks get %.0f s", grace)
            await bot.stop(grace)
            await running  # what ended the connection, if anything did, is raised


async def _until(stop: asyncio.Event, running: asyncio.Task[None]) -> None:
    """Return once ``stop`` is set (SIGINT, SIGTERM) or the client's connection ended."""
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()


def run_discord(settings: Settings, token: str, grace_s: float | None = None) -> None:
    """Serve the bot until SIGINT or SIGTERM (blocking); ``grace_s``: :func:`run_bot`'s.

    Raises:
        StartupError: Discord refused the token or the intents, or could not be reached.
    """
    discord.utils.setup_logging(level=logging.INFO)
    try:
        run_until_stopped(settings, run_bot(settings, token, grace_s=grace_s))
    except Exception as exc:
        sentence = startup_failure(exc, settings.discord.token_env)
        if sentence is None:
            raise
        raise StartupError(sentence) from None


def startup_failure(exc: BaseException, token_env: str) -> str | None:
    """One sentence for what stopped the bot from starting, or ``None`` if it is not one
    of the failures a user can fix (those keep their traceback)."""
    if isinstance(exc, discord.LoginFailure):
        return f"Discord refused the token in ${token_env}: reset it in the Developer Portal."
    if isinstance(exc, discord.PrivilegedIntentsRequired):
        return (
            "Discord refused the gateway intents the bot asked for: turn them on under "
            "Bot → Privileged Gateway Intents, or run a version that does not need them."
        )
    if isinstance(exc, aiohttp.ClientError | OSError | discord.GatewayNotFound):
        return (
            "Could not reach Discord (discord.com): check this machine's network and DNS, "
            "then start the bot again."
        )
    return None
