"""The Discord bot: the client and its command tree.

The client needs no privileged intent (only ``guilds``): slash commands, the message menu and
button presses all arrive as interactions. Commands are synced in
:meth:`FactCheckBot.setup_hook`, to the ``dev_guild`` alone when one is set
(instant, for development) and globally otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any

import discord
from discord import app_commands

from storage.service import CheckService
from zofia_engine.config import Settings
from zofia_engine.engine import Engine

from .discord_buttons import CheckButton
from .discord_commands import build_commands
from .runtime import running_service

__all__ = ["FactCheckBot", "run_bot"]

log = logging.getLogger(__name__)


class FactCheckBot(discord.Client):
    """A discord.py client that answers fact-check commands from ``service``.

    Args:
        settings: all settings; the ``[discord]`` section is used here.
        service: a started check service (see :func:`~bots.runtime.running_service`).
    """

    def __init__(self, settings: Settings, service: CheckService, **options: Any) -> None:
        super().__init__(intents=discord.Intents(guilds=True), **options)
        self.settings = settings
        self.service = service
        self.tree: app_commands.CommandTree[FactCheckBot] = app_commands.CommandTree(self)
        self.tree.on_error = self._on_command_error  # type: ignore[method-assign]
        self.last_check: dict[str, float] = {}  # chat → time.monotonic() of its last check
        # One lock per key while someone holds or waits for it (then it is dropped).
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def lock(self, key: str) -> asyncio.Lock:
        """The lock of ``key`` (say, one section of one check), shared by concurrent users."""
        found = self._locks.get(key)
        if found is None:
            found = asyncio.Lock()
            self._locks[key] = found
        return found

    async def setup_hook(self) -> None:
        self.add_dynamic_items(CheckButton)
        for command in build_commands():
            self.tree.add_command(command)
        dev_guild = self.settings.discord.dev_guild
        if dev_guild:
            guild = discord.Object(id=dev_guild)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
            log.info("synced %d commands to guild %d", len(synced), dev_guild)
        else:
            synced = await self.tree.sync()
            log.info("synced %d commands globally", len(synced))

    async def _on_command_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        log.error("command failed", exc_info=error)
        text = "Something went wrong on our side; the error was logged."
        try:
            if interaction.response.is_done():
                await interaction.followup.send(text, ephemeral=True)
            else:
                await interaction.response.send_message(text, ephemeral=True)
        except discord.HTTPException:
            log.warning("could not tell the user about the error")


async def run_bot(settings: Settings, token: str, *, engine: Engine | None = None) -> None:
    """Run the bot until it is stopped: the service, then the client on top of it.

    The token and the connection are tried first, before any model loads, so that a
    bad token or no network fails in a second.
    """
    probe = discord.Client(intents=discord.Intents(guilds=True))
    try:
        await probe.login(token)
    finally:
        await probe.close()
    async with (
        running_service(settings, engine=engine) as service,
        FactCheckBot(settings, service) as bot,
    ):
        await bot.start(token)
