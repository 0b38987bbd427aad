"""``zofia discord``: run the Discord bot with the token from the environment.

discord.py is imported only when the command runs, so the rest of the CLI
starts without it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import warnings
from pathlib import Path

import click

from zofia_engine.config import Settings

from .settings import CONFIG_OPTION, settings_from

__all__ = ["discord_command", "startup_failure", "token_from_env"]


def token_from_env(settings: Settings, environ: dict[str, str] | None = None) -> str:
    """The bot token from the environment variable the settings name.

    Raises:
        click.ClickException: the variable is unset or empty (its name is said, never a value).
    """
    name = settings.discord.token_env
    token = (os.environ if environ is None else environ).get(name, "").strip()
    if not token:
        raise click.ClickException(
            f"set ${name} to the bot token (Developer Portal → your application → Bot)"
        )
    return token


@click.command()
@CONFIG_OPTION
def discord_command(config: Path | None) -> None:
    """Run the Discord bot (token from $DISCORD_BOT_TOKEN, or [discord] token_env)."""
    settings = settings_from(config)
    token = token_from_env(settings)
    with warnings.catch_warnings():  # discord.py imports audioop, deprecated since 3.11
        warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
        import discord

        from .discord_client import run_bot

    discord.utils.setup_logging(level=logging.INFO)
    try:
        asyncio.run(run_bot(settings, token))
    except KeyboardInterrupt:
        pass
    except Exception as exc:
        sentence = startup_failure(exc, settings.discord.token_env)
        if sentence is None:
            raise
        raise click.ClickException(sentence) from None


def startup_failure(exc: BaseException, token_env: str) -> str | None:
    """One sentence for what stopped the bot from starting, or ``None`` if it is not one
    of the failures a user can fix (those keep their traceback)."""
    import aiohttp
    import discord

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
