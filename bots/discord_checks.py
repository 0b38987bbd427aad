"""One check for one interaction: defer, show progress, finish with the verdict embed.

The deferred response is edited while the check runs (at most every
``progress_interval_s``) and replaced by the verdict embed with its buttons.
When the 15-minute interaction token has expired by then, the verdict is
posted into the channel instead.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from typing import TYPE_CHECKING, Any

import discord

from zofia_engine.errors import ZofiaError
from zofia_engine.post import ProgressEvent

from .card import error_sentence, progress_lines, verdict_card
from .discord_buttons import verdict_view
from .discord_chats import chat_of, requester_of
from .discord_render import escape, progress_message, verdict_embed
from .discord_settings import guild_settings
from .runtime import post_from_message

if TYPE_CHECKING:
    from .discord_client import FactCheckBot

__all__ = ["cooldown_left", "finish", "run_check"]

log = logging.getLogger(__name__)

INVALID_WEBHOOK_TOKEN = 50027
UNKNOWN_WEBHOOK = 10015
NONE = discord.AllowedMentions.none()


def cooldown_left(bot: FactCheckBot, interaction: discord.Interaction[Any]) -> float:
    """Seconds until this server (or DM) may start another check; 0 when it may now."""
    chat = chat_of(interaction)
    wait = guild_settings(bot.service.store, chat, bot.settings.discord).cooldown_s
    last = bot.last_check.get(chat)
    if last is None:
        return 0.0
    return max(0.0, last + wait - time.monotonic())


async def _show(
    interaction: discord.Interaction[Any],
    *,
    content: str | None = None,
    embed: discord.Embed | None = None,
    view: discord.ui.View | None = None,
) -> bool:
    """Edit the deferred response; ``False`` once its token has expired."""
    if interaction.is_expired():
        return False
    try:
        await interaction.edit_original_response(
            content=content,
            embed=embed,
            view=view,
            allowed_mentions=NONE,
        )
    except discord.HTTPException as exc:
        if exc.code in (INVALID_WEBHOOK_TOKEN, UNKNOWN_WEBHOOK) or exc.status == 401:
            return False
        raise
    return True


async def finish(
    interaction: discord.Interaction[Any],
    *,
    content: str | None = None,
    embed: discord.Embed | None = None,
    view: discord.ui.View | None = None,
) -> None:
    """Show the last word: in the deferred response, else as a message in the channel."""
    if await _show(interaction, content=content, embed=embed, view=view):
        return
    channel = interaction.channel
    if not isinstance(channel, discord.abc.Messageable):
        log.warning("interaction %s expired and its channel is unknown", interaction.id)
        return
    mention = f"{interaction.user.mention} " if content is None else ""
    try:
        await channel.send(
            content=f"{mention}{content or ''}".strip() or None,
            embed=embed or discord.utils.MISSING,
            view=view or discord.utils.MISSING,
            allowed_mentions=discord.AllowedMentions(
                everyone=False, roles=False, replied_user=False, users=[interaction.user]
            ),
        )
    except discord.HTTPException:
        log.warning("could not post the verdict of interaction %s", interaction.id)


async def run_check(
    bot: FactCheckBot,
    interaction: discord.Interaction[Any],
    text: str,
    *,
    origin: str = "",
    published: dt.date | None = None,
    deferred: bool = False,
) -> None:
    """Check ``text`` for the user of ``interaction`` and answer with the verdict.

    Args:
        deferred: the response was deferred already (the caller fetched a message).
    """
    chat_settings = guild_settings(bot.service.store, chat_of(interaction), bot.settings.discord)
    if not deferred:
        await interaction.response.defer(thinking=True, ephemeral=chat_settings.ephemeral)
    bot.last_check[chat_of(interaction)] = time.monotonic()
    try:
        post = await post_from_message(
            text, published=published, origin=origin, language=chat_settings.language
        )
        handle = await bot.service.submit(post, requester_of(interaction))
        events: list[ProgressEvent] = []
        shown = 0.0
        interval = bot.settings.discord.progress_interval_s
        live = True
        async for event in handle.events():
            events.append(event)
            if live and time.monotonic() - shown >= interval:
                text = progress_message(progress_lines(events))
                try:
                    live = await _show(interaction, content=text)
                except discord.HTTPException as exc:  # progress is a courtesy; go on
                    log.warning("could not show progress: %s", exc.text)
                shown = time.monotonic()
        outcome = await handle.result()
    except ZofiaError as exc:
        await finish(interaction, content=escape(error_sentence(exc)))
        return
    card = verdict_card(outcome, origin=post.origin, published=post.published)
    await finish(
        interaction, content=None, embed=verdict_embed(card), view=verdict_view(card.check_id)
    )
