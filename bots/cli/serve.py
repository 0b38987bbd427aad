"""``zofia telegram``, ``zofia discord`` and ``zofia whatsapp``: run a bot until it is
stopped.

Each platform's library is imported only when its command runs.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import click

from bots.app.runtime import StartupError

from .options import CONFIG_OPTION, settings_from

__all__ = ["discord", "telegram", "whatsapp"]


GRACE_OPTION = click.option(
    "--grace",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help=(
        "Seconds the checks taken get to finish at SIGINT or SIGTERM; the rest go back "
        "to the queue, their askers told ([service] shutdown_grace_s, 30 by default)."
    ),
)


@contextlib.contextmanager
def _startup_said() -> Iterator[None]:
    """A bot that could not start: its one sentence is the command's error."""
    try:
        yield
    except StartupError as exc:
        raise click.ClickException(str(exc)) from None


@click.command()
@GRACE_OPTION
@CONFIG_OPTION
def telegram(grace: float | None, config: Path | None) -> None:
    """Run the Telegram bot (polling, or webhook when [telegram] webhook_url is set)."""
    settings = settings_from(config)
    token = os.environ.get(settings.telegram.token_env, "").strip()
    if not token:
        raise click.ClickException(
            f"no bot token: set ${settings.telegram.token_env} (create the bot with @BotFather)"
        )
    from bots.app.telegram import run_telegram

    with _startup_said():
        run_telegram(settings, token, grace)


@click.command()
@GRACE_OPTION
@CONFIG_OPTION
def discord(grace: float | None, config: Path | None) -> None:
    """Run the Discord bot (token from $DISCORD_BOT_TOKEN, or [discord] token_env)."""
    settings = settings_from(config)
    with warnings.catch_warnings():  # discord.py imports audioop, deprecated since 3.11
        warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
        from bots.app.discord import run_discord, token_from_env

    with _startup_said():
        run_discord(settings, token_from_env(settings), grace)


@click.command()
@GRACE_OPTION
@CONFIG_OPTION
def whatsapp(grace: float | None, config: Path | None) -> None:
    """Run the WhatsApp tipline: the Cloud API's webhook on [whatsapp] listen:port (the
    access token, app secret and verify token from the environment: docs/whatsapp.md)."""
    settings = settings_from(config)
    from bots.app.whatsapp import credentials_from_env, run_whatsapp

    with _startup_said():
        run_whatsapp(settings, credentials_from_env(settings), grace)
