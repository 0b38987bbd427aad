"""One check for one interaction: defer, show progress, finish with the verdict embed.

The deferred response is edited while the check runs (at most every
``progress_interval_s``) and replaced by the verdict embed with its buttons.
When the 15-minute interaction token has expired by then, the verdict is
posted into the channel instead; where the server keeps replies private
(ephemeral), it goes to the requester's DMs, never into the channel.

Each server (or DM) may start one check per cooldown: a command claims the
cooldown (:class:`~bots.common.cooldowns.Cooldowns`) before its first ``await``, so
concurrent commands cannot all pass, and gives it back when its input is refused
before a check starts.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import Sequence
from typing import Any

import discord

from bots.common.card import verdict_card
from bots.common.posts import post_from_message
from bots.common.progress import progress_lines
from bots.common.sentences import error_sentence
from zofia_engine.errors import ZofiaError
from zofia_engine.post import ProgressEvent
from zofia_engine.text import checkable_text

from .buttons import verdict_view
from .chats import PLATFORM, chat_of, requester_of
from .context import DiscordContext
from .delivery import INVALID_WEBHOOK_TOKEN, LATE_PRIVATE, UNKNOWN_WEBHOOK, delivery_target
from .guild_settings import guild_settings
from .pictures import download_pictures, refuse_before_download
from .render import NONE, escape, progress_message, verdict_embed

__all__ = ["finish", "run_check"]

log = logging.getLogger(__name__)


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
    ctx: DiscordContext,
    interaction: discord.Interaction[Any],
    text: str,
    *,
    cooldown_claim: float,
    pictures: Sequence[discord.Attachment] = (),
    origin: str = "",
    published: dt.date | None = None,
    deferred: bool = False,
) -> None:
    """Check ``text`` (with ``pictures``, the text is their caption and may be empty)
    for the user of ``interaction`` and answer with the verdict.

    Args:
        cooldown_claim: what the chat's cooldown claim recorded for this request; it is
            given back when no check starts (the text or a picture's declared size is
            refused, or limits apply).
        pictures: attachments to download and check (see :mod:`.pictures`).
        deferred: the response was deferred already (the caller fetched a message).
    """
    chat = chat_of(interaction)
    chat_settings = guild_settings(ctx.service, chat, ctx.settings)
    private = chat_settings.ephemeral
    started = False
    try:
        if not deferred:
            await interaction.response.defer(thinking=True, ephemeral=private)
        requester = requester_of(interaction)
        # An empty post, or a picture too large, is refused before it costs the chat anything.
        if pictures:
            refuse_before_download(pictures, ctx.images)
        else:
            checkable_text(text)
        ctx.service.admit(requester)  # before a link or picture is fetched
        # From here the request costs work (a download, a check): the cooldown stays spent.
        started = True
        post = await post_from_message(
            text,
            pictures=await download_pictures(pictures),
            published=published,
            origin=origin,
            language=chat_settings.language,
        )
        handle = await ctx.service.submit(post, requester)
        # Queued on workers: a deliver job posts the verdict, from whichever replica is
        # alive then; this one shows progress while it is.
        queued = ctx.service.delivers_cards and not handle.done
        if queued:
            target = delivery_target(
                interaction, ephemeral=private, origin=post.origin, published=post.published
            )
            await ctx.service.expect_delivery(handle.check_id, PLATFORM, target)  # type: ignore[attr-defined]
        events: list[ProgressEvent] = []
        shown = 0.0
        interval = ctx.settings.progress_interval_s
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
        if queued:
            if handle.cancelled:
                raise asyncio.CancelledError
            return
        outcome = await handle.result()
    except ZofiaError as exc:
        if not started:
            ctx.cooldowns.release(chat, cooldown_claim)
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
        view=verdict_view(card.check_id, report_url=ctx.report_url(card.check_id)),
        ephemeral=private,
    )
