"""The verdict's buttons: Debate, Evidence, Claims, 👍, 👎 and Review (:mod:`.reviews`).

Each button's state is in its custom id (``zf:debate:<check id>``), and the
report is read from the store when it is pressed (after the press is acknowledged, off
the event loop), so buttons keep working after a restart. Debate, Evidence and Claims
post into a thread on the verdict message (one per message), once per section: a later
press points to the thread (the service keeps a mark per posted section, like the
Telegram bot's, claimed in the store before posting: one press posts it, across replicas).
Where no thread can be opened (DMs, ephemeral replies, missing permissions),
a section comes as ephemeral follow-ups, to whoever pressed, each time.
A vote on a repeat counts for the check it repeats, so a verdict's votes add up.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any, Self

import discord

from bots.render.card import VerdictCard
from bots.render.sections import section
from bots.render.words import ENGLISH, N_, Words, words_for
from bots.service.records import Requester

from .chats import PLATFORM, stored_check
from .context import DiscordContext, askers_words, context_of
from .render import NONE, section_messages, thread_name
from .reviews import start_review

__all__ = ["CheckButton", "card_view", "verdict_view"]

log = logging.getLogger(__name__)

# Said in the check's language once it is read, else in the presser's Discord language.
NOT_FOUND = N_("That check was not found.")
VOTED = N_("Thanks for the feedback. Votes so far: 👍 {up} · 👎 {down}")
POSTED = N_("Already posted in the thread: {where}")
THREAD_EXISTS = 160004

_LOOKS = {
    "debate": (N_("Debate"), "🗣️", discord.ButtonStyle.primary),
    "evidence": (N_("Evidence"), "📚", discord.ButtonStyle.secondary),
    "claims": (N_("Claims"), "🔎", discord.ButtonStyle.secondary),
    "up": ("", "👍", discord.ButtonStyle.success),
    "down": ("", "👎", discord.ButtonStyle.danger),
    "review": (N_("Review"), "🛡️", discord.ButtonStyle.secondary),
}


class CheckButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=(
        r"zf:(?P<kind>debate|evidence|claims|up|down|review)"
        r":(?P<check_id>[A-Za-z0-9_-]{1,64})"
    ),
):
    """One of the verdict's buttons, for one check."""

    def __init__(self, kind: str, check_id: str, words: Words = ENGLISH) -> None:
        label, emoji, style = _LOOKS[kind]
        super().__init__(
            discord.ui.Button(
                label=words(label) if label else None,
                emoji=emoji,
                style=style,
                custom_id=f"zf:{kind}:{check_id}",
            )
        )
        self.kind = kind
        self.check_id = check_id

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> Self:
        return cls(match["kind"], match["check_id"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        ctx = context_of(interaction)
        if self.kind == "review":
            await start_review(ctx, interaction, self.check_id, functools.partial(card_view, ctx))
        elif self.kind in ("up", "down"):
            await _vote(ctx, interaction, self.check_id, 1 if self.kind == "up" else -1)
        else:
            await _open_section(ctx, interaction, self.check_id, self.kind)


def verdict_view(check_id: str, *, report_url: str = "", words: Words = ENGLISH) -> discord.ui.View:
    """The six buttons under a verdict, and, when there is a ``report_url`` (the report
    page), a "Full report" link to it and a "Share" link to it (Discord has no share
    sheet: its link is what a member copies and passes on; the report page shows what the
    card shows and more, under the same key as the card's footer); labelled in
    ``words``; the view never times out."""
    view = discord.ui.View(timeout=None)
    for kind in _LOOKS:
        view.add_item(CheckButton(kind, check_id, words))
    if report_url:
        view.add_item(discord.ui.Button(label=words("Full report"), emoji="📄", url=report_url))
        view.add_item(discord.ui.Button(label=words("Share"), emoji="🔗", url=report_url))
    return view


def card_view(ctx: DiscordContext, card: VerdictCard) -> discord.ui.View:
    """The buttons under ``card``, with the link to its report page, in its language; an
    early card (``complete`` false: the debate still being written) has none yet."""
    if not card.complete:
        return discord.ui.View(timeout=None)
    return verdict_view(card.check_id, report_url=ctx.report_url(card.check_id), words=card.words)


async def _vote(
    ctx: DiscordContext, interaction: discord.Interaction[Any], check_id: str, vote: int
) -> None:
    await interaction.response.defer(ephemeral=True, thinking=True)  # before any read
    found = await stored_check(ctx, check_id, interaction)
    if found is None:
        await interaction.followup.send(askers_words(interaction)(NOT_FOUND), ephemeral=True)
        return
    voter = Requester(PLATFORM, str(interaction.user.id))
    up, down = await ctx.service.chats.vote(found[0], voter, vote)
    said = words_for(found[0].language)(VOTED, up=up, down=down)
    await interaction.followup.send(said, ephemeral=True)


async def _thread(
    interaction: discord.Interaction[Any], check_id: str
) -> discord.abc.Messageable | None:
    """The thread on the verdict message, opened now or before; ``None`` where none can be."""
    message = interaction.message
    if message is None or message.guild is None or message.flags.ephemeral:
        return None
    try:
        await message.create_thread(name=thread_name(check_id), auto_archive_duration=1440)
    except discord.HTTPException as exc:
        if exc.code != THREAD_EXISTS:
            log.info("no thread on message %s: %s", message.id, exc.text)
            return None
    # A thread started from a message has the message's id.
    thread: discord.PartialMessageable = interaction.client.get_partial_messageable(
        message.id, guild_id=message.guild.id
    )
    return thread


async def _post_to_thread(
    thread: discord.abc.Messageable, title: str, messages: list[str], check_id: str
) -> bool:
    """Post a section into the thread; ``False`` when Discord refused (it is then
    shown as ephemeral follow-ups instead)."""
    try:
        await thread.send(f"**{title}**", allowed_mentions=NONE, suppress_embeds=True)
        for message in messages:
            await thread.send(message, allowed_mentions=NONE, suppress_embeds=True)
    except discord.HTTPException as exc:
        log.info("cannot post into the thread of check %s: %s", check_id, exc.text)
        return False
    return True


async def _open_section(
    ctx: DiscordContext, interaction: discord.Interaction[Any], check_id: str, kind: str
) -> None:
    await interaction.response.defer(ephemeral=True, thinking=True)
    found = await stored_check(ctx, check_id, interaction)
    if found is None:
        await interaction.followup.send(askers_words(interaction)(NOT_FOUND), ephemeral=True)
        return
    row, report = found
    part = section(kind, report, words_for(row.language))
    messages = section_messages(part)
    chats = ctx.service.chats
    card = interaction.message
    if card is not None and card.guild is not None and not card.flags.ephemeral:
        # Posted once, by whichever press (on any replica) claims it in the store first;
        # the thread started from the card has the card's id.
        if not await chats.claim_mark(row.id, kind, card.id):
            where = await chats.mark(row.id, kind) or card.id
            said = words_for(row.language)(POSTED, where=f"<#{int(where)}>")
            await interaction.followup.send(said, ephemeral=True)
            return
        thread = await _thread(interaction, check_id)
        if thread is not None and await _post_to_thread(thread, part.title, messages, check_id):
            await interaction.followup.send(f"{part.title}: <#{card.id}>", ephemeral=True)
            return
        await chats.set_mark(row.id, kind, None)  # a later press tries again
    for message in messages:
        await interaction.followup.send(
            message, ephemeral=True, allowed_mentions=NONE, suppress_embeds=True
        )
