"""Who and where an interaction comes from, and which stored checks it may see.

Limits and settings are kept per chat: a server, or a DM channel. A check's
buttons answer only in the chat the check was made in; any other id, forged or
foreign, is "not found".
"""

from __future__ import annotations

from typing import Any

import discord

from bots.service.records import CheckRow, Requester
from zofia_engine.report import Report

from .context import DiscordContext
from .settings import PLATFORM

__all__ = ["PLATFORM", "chat_of", "requester_of", "stored_check"]


def chat_of(interaction: discord.Interaction[Any]) -> str:
    """The chat limits and settings are kept for: the server, or the DM channel."""
    if interaction.guild_id is not None:
        return str(interaction.guild_id)
    return f"dm-{interaction.channel_id or interaction.user.id}"


def requester_of(interaction: discord.Interaction[Any]) -> Requester:
    """The service's requester for the user of ``interaction`` (a DM is private; a
    server's channel is a group's)."""
    private = interaction.guild_id is None
    user, chat = str(interaction.user.id), chat_of(interaction)
    return Requester(PLATFORM, user, chat, private=private, in_group=not private)


async def stored_check(
    ctx: DiscordContext, check_id: str, interaction: discord.Interaction[Any]
) -> tuple[CheckRow, Report] | None:
    """A stored check and its report, if it was made on Discord in this chat; a forged
    id, or one from another server or platform, is ``None`` (said as "not found")."""
    found = await ctx.service.chats.stored(check_id, PLATFORM, chat_of(interaction))
    row, report = found or (None, None)
    return None if row is None or report is None else (row, report)
