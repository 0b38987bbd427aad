"""The Discord bot: the client and its command tree.

The client needs no privileged intent: slash commands, the message menu and button presses
all arrive as interactions, and the messages it reads (follow-up questions, :mod:`.follow_ups`)
are DMs and replies that mention it, whose text Discord gives without Message Content.
Commands are synced in :meth:`FactCheckBot.setup_hook`, to the ``dev_guild`` alone when one
is set (instant, for development) and globally otherwise, their descriptions in each language
the card has words for (:mod:`.translator`).
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands

from bots.render.sentences import error_sentence
from bots.service.checks import CheckService
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.image_settings import ImageSettings

from .buttons import CheckButton
from .commands import build_commands
from .context import DiscordContext, askers_words
from .follow_ups import on_follow_up
from .settings import DiscordSettings
from .translator import DescriptionWords

__all__ = ["FactCheckBot"]

log = logging.getLogger(__name__)


class FactCheckBot(discord.AutoShardedClient):
    """A discord.py client that answers fact-check commands from ``service``.

    Auto-sharded: it asks Discord how many shards the bot needs (one below 2,500 guilds)
    and runs them all in this process.

    Args:
        settings: the ``[discord]`` section.
        service: a started check service (see
            :func:`~bots.app.runtime.running_service`).
        images: the engine's ``[images]`` caps, for refusals before a download.
        public_url: ``[site] public_url``; set, each verdict links to its report page.
    """

    def __init__(
        self,
        settings: DiscordSettings,
        service: CheckService,
        *,
        images: ImageSettings | None = None,
        audio: AudioSettings | None = None,
        public_url: str = "",
        **options: Any,
    ) -> None:
        intents = discord.Intents(guilds=True, guild_messages=True, dm_messages=True)
        super().__init__(intents=intents, **options)
        self.context = DiscordContext(
            service,
            settings,
            images=images or ImageSettings(),
            audio=audio or AudioSettings(),
            public_url=public_url,
        )
        self.tree: app_commands.CommandTree[FactCheckBot] = app_commands.CommandTree(self)
        self.tree.on_error = self._on_command_error  # type: ignore[method-assign]

    @property
    def service(self) -> CheckService:
        return self.context.service

    async def setup_hook(self) -> None:
        self.add_dynamic_items(CheckButton)
        for command in build_commands():
            self.tree.add_command(command)
        await self.tree.set_translator(DescriptionWords())  # read when syncing
        dev_guild = self.context.settings.dev_guild
        if dev_guild:
            guild = discord.Object(id=dev_guild)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
            log.info("synced %d commands to guild %d", len(synced), dev_guild)
        else:
            synced = await self.tree.sync()
            log.info("synced %d commands globally", len(synced))

    async def stop(self, grace_s: float) -> None:
        """Stop taking checks (a new one is told the bot is restarting), give those taken
        ``grace_s`` to finish, hand back the rest (each tells its asker, while the
        connection is still open: :func:`~bots.chat.check_flow.run_check`), then close."""
        await self.context.work.drain(grace_s)
        await self.close()

    async def on_message(self, message: discord.Message) -> None:
        """A reply to a verdict card may be a follow-up question (:mod:`.follow_ups`)."""
        if self.user is not None:
            await on_follow_up(self.context, self.user.id, message)

    async def _on_command_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        log.error("command failed", exc_info=error)
        # Nothing is read: said in the user's Discord language.
        text = error_sentence(error, askers_words(interaction))
        try:
            if interaction.response.is_done():
                await interaction.followup.send(text, ephemeral=True)
            else:
                await interaction.response.send_message(text, ephemeral=True)
        except discord.HTTPException:
            log.warning("could not tell the user about the error")
