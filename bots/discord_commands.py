"""The application commands: ``/factcheck``, the "Fact-check" message command and
``/factcheck-settings``.

The commands only route: they check the server's cooldown, find the text (the
option, the linked message, or the message the menu was opened on) and hand
it to :func:`~bots.discord_checks.run_check`.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, cast

import discord
from discord import app_commands

from .discord_chats import chat_of
from .discord_checks import cooldown_left, finish, run_check
from .discord_settings import MAX_COOLDOWN_S, MAX_LANGUAGE, guild_settings, save_guild_settings

if TYPE_CHECKING:
    from .discord_client import FactCheckBot

__all__ = ["build_commands", "message_text", "parse_message_link"]

MAX_TEXT = 4000
_LINK = re.compile(
    r"https?://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/channels/"
    r"(?P<guild>\d+|@me)/(?P<channel>\d+)/(?P<message>\d+)/?",
    re.IGNORECASE,
)
EVERYWHERE = {"guilds": True, "dms": True, "private_channels": True}


def parse_message_link(link: str) -> tuple[int, int] | None:
    """``(channel id, message id)`` of a Discord message link, or ``None``."""
    match = _LINK.fullmatch(link.strip())
    return (int(match["channel"]), int(match["message"])) if match else None


def message_text(message: discord.Message) -> str:
    """What there is to check in a message: its text, else the text of its embeds."""
    if message.content.strip():
        return message.content
    parts = [part for embed in message.embeds for part in (embed.title, embed.description) if part]
    return "\n\n".join(parts)


def _origin(message: discord.Message) -> str:
    return f"a Discord message by {message.author.display_name}"


async def _refuse_during_cooldown(bot: FactCheckBot, interaction: discord.Interaction[Any]) -> bool:
    wait = cooldown_left(bot, interaction)
    if wait <= 0:
        return False
    await interaction.response.send_message(
        f"A check was started here moments ago; try again in {math.ceil(wait)} s.",
        ephemeral=True,
    )
    return True


async def _check_message(
    bot: FactCheckBot, interaction: discord.Interaction[Any], message: discord.Message
) -> None:
    text = message_text(message)
    if not text.strip():
        await finish(
            interaction,
            content="That message has no text I can see. Open its menu (Apps → Fact-check) "
            "instead, or paste its text into /factcheck.",
        )
        return
    published = message.created_at.date()
    await run_check(
        bot, interaction, text, origin=_origin(message), published=published, deferred=True
    )


@app_commands.describe(
    text="The post's text (or a link to an article).",
    message_link="A link to a message in a channel I can read.",
)
async def factcheck(
    interaction: discord.Interaction[Any],
    text: app_commands.Range[str, 1, MAX_TEXT] | None = None,
    message_link: str | None = None,
) -> None:
    """Fact-check a post: paste its text, or link to a message."""
    bot = cast("FactCheckBot", interaction.client)
    if (text is None) == (message_link is None):
        await interaction.response.send_message(
            "Give either `text` or `message_link` (one of them).", ephemeral=True
        )
        return
    if await _refuse_during_cooldown(bot, interaction):
        return
    if text is not None:
        await run_check(bot, interaction, text)
        return
    ids = parse_message_link(message_link or "")
    if ids is None:
        await interaction.response.send_message(
            "That is not a Discord message link (Copy Message Link gives one).", ephemeral=True
        )
        return
    ephemeral = guild_settings(bot.service.store, chat_of(interaction), bot.settings.discord)
    await interaction.response.defer(thinking=True, ephemeral=ephemeral.ephemeral)
    try:
        message = await bot.get_partial_messageable(ids[0]).fetch_message(ids[1])
    except discord.Forbidden:
        await finish(
            interaction,
            content="I cannot read that channel. Use Apps → Fact-check on the message, "
            "or paste its text into /factcheck.",
        )
        return
    except discord.NotFound:
        await finish(interaction, content="That message was not found.")
        return
    await _check_message(bot, interaction, message)


async def fact_check_message(
    interaction: discord.Interaction[Any], message: discord.Message
) -> None:
    """Fact-check the message the menu was opened on (it comes with the interaction)."""
    bot = cast("FactCheckBot", interaction.client)
    if await _refuse_during_cooldown(bot, interaction):
        return
    ephemeral = guild_settings(bot.service.store, chat_of(interaction), bot.settings.discord)
    await interaction.response.defer(thinking=True, ephemeral=ephemeral.ephemeral)
    await _check_message(bot, interaction, message)


@app_commands.describe(
    cooldown_s="Least seconds between two checks started here.",
    ephemeral="Show verdicts only to whoever asked.",
    language="The language the panel writes its summary and debate in (English to reset).",
)
async def factcheck_settings(
    interaction: discord.Interaction[Any],
    cooldown_s: app_commands.Range[float, 0.0, MAX_COOLDOWN_S] | None = None,
    ephemeral: bool | None = None,
    language: app_commands.Range[str, 1, MAX_LANGUAGE] | None = None,
) -> None:
    """Show or change this server's fact-check settings."""
    bot = cast("FactCheckBot", interaction.client)
    permissions = interaction.permissions
    if interaction.guild_id is None or not permissions.manage_guild:
        await interaction.response.send_message(
            "Only server admins (Manage Server) can change these settings.", ephemeral=True
        )
        return
    chat = chat_of(interaction)
    try:
        save_guild_settings(
            bot.service.store, chat, cooldown_s=cooldown_s, ephemeral=ephemeral, language=language
        )
    except ValueError as exc:
        await interaction.response.send_message(f"{str(exc).capitalize()}.", ephemeral=True)
        return
    now = guild_settings(bot.service.store, chat, bot.settings.discord)
    await interaction.response.send_message(now.describe(), ephemeral=True)


def build_commands() -> list[app_commands.Command[Any, ..., None] | app_commands.ContextMenu]:
    """Fresh command objects for a client's tree (one set per client)."""
    slash: app_commands.Command[Any, ..., None] = app_commands.Command(
        name="factcheck",
        description="Fact-check a post: paste its text, or link to a message.",
        callback=factcheck,
    )
    menu = app_commands.ContextMenu(name="Fact-check", callback=fact_check_message)
    for command in (slash, menu):
        app_commands.allowed_installs(guilds=True, users=True)(command)
        app_commands.allowed_contexts(**EVERYWHERE)(command)
    settings: app_commands.Command[Any, ..., None] = app_commands.Command(
        name="factcheck-settings",
        description="Show or change this server's fact-check settings (admins).",
        callback=factcheck_settings,
    )
    settings.default_permissions = discord.Permissions(manage_guild=True)
    app_commands.allowed_installs(guilds=True, users=False)(settings)
    app_commands.allowed_contexts(guilds=True, dms=False, private_channels=False)(settings)
    return [slash, menu, settings]
