"""One check for one interaction: defer, show progress, finish with the verdict embed.

The deferred response is edited while the check runs (at most every
``progress_interval_s``) and replaced by the verdict embed with its buttons.
When the 15-minute interaction token has expired by then, the verdict is
posted into the channel instead; where the server keeps replies private
(ephemeral), it goes to the requester's DMs, never into the channel.

Each server (or DM) may start one check per cooldown: a command claims the
cooldown with :func:`claim_cooldown` before its first ``await`` (so concurrent
commands cannot all pass), and gives it back with :func:`release_cooldown`
when its input is refused before a check starts.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from typing import TYPE_CHECKING, Any

import discord

from zofia_engine.errors import ZofiaError
from zofia_engine.post import ProgressEvent
from zofia_engine.text import checkable_text

from .card import error_sentence, progress_lines, verdict_card
from .discord_buttons import verdict_view
from .discord_chats import chat_of, requester_of
from .discord_render import NONE, escape, progress_message, verdict_embed
from .discord_settings import MAX_COOLDOWN_S, guild_settings
from .runtime import post_from_message

if TYPE_CHECKING:
    from .discord_client import FactCheckBot

__all__ = ["claim_cooldown", "finish", "release_cooldown", "run_check"]

log = logging.getLogger(__name__)

INVALID_WEBHOOK_TOKEN = 50027
UNKNOWN_WEBHOOK = 10015
LATE_PRIVATE = (
    "Your fact-check took longer than Discord keeps a private reply open, so here is its answer."
)


def claim_cooldown(bot: FactCheckBot, chat: str, wait_s: float) -> float:
    """Seconds until ``chat`` may start another check, or 0 when it may now; then this
    request is counted as the chat's latest check, at once (no ``await`` in between).

    Returns:
        The seconds left (nothing is recorded), or ``0.0`` (the claim is recorded in
        ``bot.last_check[chat]``; hand that value to :func:`release_cooldown`).
    """
    now = time.monotonic()
    last = bot.last_check.get(chat)
    if last is not None and last + wait_s > now:
        return last + wait_s - now
    if len(bot.last_check) > 1024:  # forget chats whose longest cooldown is over
        for key, at in list(bot.last_check.items()):
            if at + MAX_COOLDOWN_S <= now:
                del bot.last_check[key]
    bot.last_check[chat] = now
    return 0.0


def release_cooldown(bot: FactCheckBot, chat: str, claimed_at: float) -> None:
    """Give back the claim made at ``claimed_at``: its input was refused before a check
    started. A later claim (a shorter cooldown let one through since) is kept."""
    if bot.last_check.get(chat) == claimed_at:
        del bot.last_check[chat]


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


async def _tell_privately(
    interaction: discord.Interaction[Any], content: str | None, embed: discord.Embed | None
) -> None:
    """The last word of an expired private reply, as a DM to the requester (without the
    buttons: they answer only in the server the check was made in)."""
    log.info("interaction %s expired; its private answer goes to a DM", interaction.id)
    try:
        await interaction.user.send(
            content=content or LATE_PRIVATE,
            embed=embed or discord.utils.MISSING,
            allowed_mentions=NONE,
        )
    except discord.HTTPException as exc:
        log.warning("could not DM the answer of interaction %s: %s", interaction.id, exc.text)


async def finish(
    interaction: discord.Interaction[Any],
    *,
    ephemeral: bool,
    content: str | None = None,
    embed: discord.Embed | None = None,
    view: discord.ui.View | None = None,
) -> None:
    """Show the last word: in the deferred response, else as a message in the channel,
    or, when the response was ``ephemeral``, in a DM to the requester."""
    if await _show(interaction, content=content, embed=embed, view=view):
        return
    if ephemeral:
        await _tell_privately(interaction, content, embed)
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


def _shutting_down() -> bool:
    """Whether the running task itself is being cancelled (not just the check it waits on)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def run_check(
    bot: FactCheckBot,
    interaction: discord.Interaction[Any],
    text: str,
    *,
    cooldown_claim: float,
    origin: str = "",
    published: dt.date | None = None,
    deferred: bool = False,
) -> None:
    """Check ``text`` for the user of ``interaction`` and answer with the verdict.

    Args:
        cooldown_claim: what :func:`claim_cooldown` recorded for this request; it is
            given back when no check starts (the text is refused, or limits apply).
        deferred: the response was deferred already (the caller fetched a message).
    """
    chat = chat_of(interaction)
    chat_settings = guild_settings(bot.service, chat, bot.settings.discord)
    private = chat_settings.ephemeral
    started = False
    try:
        if not deferred:
            await interaction.response.defer(thinking=True, ephemeral=private)
        requester = requester_of(interaction)
        checkable_text(text)  # an empty post is refused before it costs the chat anything
        bot.service.admit(requester)  # before a link is fetched: a refusal costs nothing
        # From here the request costs work (a fetch, a check): the cooldown stays spent.
        started = True
        post = await post_from_message(
            text, published=published, origin=origin, language=chat_settings.language
        )
        handle = await bot.service.submit(post, requester)
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
        if not started:
            release_cooldown(bot, chat, cooldown_claim)
        await finish(interaction, content=escape(error_sentence(exc)), ephemeral=private)
        return
    except asyncio.CancelledError as exc:
        if _shutting_down():
            raise
        # The run this check waited on was cancelled by someone else: say so.
        await finish(interaction, content=escape(error_sentence(exc)), ephemeral=private)
        return
    card = verdict_card(outcome, origin=post.origin, published=post.published)
    await finish(
        interaction,
        content=None,
        embed=verdict_embed(card),
        view=verdict_view(card.check_id),
        ephemeral=private,
    )
