"""Cards of a queued deployment's Discord checks, posted by whichever replica runs the
``deliver`` job.

The request records the interaction's application id and token (Discord lets anyone
holding them edit the deferred response for 15 minutes), its channel, the requester
and whether the answer was private. The job edits the deferred response into the
verdict; once the token has expired it posts in the channel, or, for a private answer,
in a DM, as :func:`~bots.discord.check_flow.finish` does for a live check. A response
someone deleted gets nothing more, as a live check's: the job ends there, it is not
tried again.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping
from typing import Any

import discord

from bots.chat.check_flow import card_for, failure_for, target_words
from bots.render.card import VerdictCard
from bots.render.words import N_
from bots.service.records import CardPlace, CardState, Claim, Failed

from .buttons import card_view
from .chats import PLATFORM
from .context import DiscordContext
from .render import NONE, escape, verdict_embed

__all__ = [
    "INTERACTION_LIFETIME",
    "INVALID_WEBHOOK_TOKEN",
    "LATE_PRIVATE",
    "UNKNOWN_MESSAGE",
    "UNKNOWN_WEBHOOK",
    "delivery_target",
    "post_delivered",
]

log = logging.getLogger(__name__)

INVALID_WEBHOOK_TOKEN = 50027
UNKNOWN_WEBHOOK = 10015
#: Discord's code for a message that is not there (a response or a card was deleted)
UNKNOWN_MESSAGE = 10008
LATE_PRIVATE = N_(
    "Your fact-check took longer than Discord keeps a private reply open, so here is its answer."
)

#: how long Discord keeps an interaction's token valid
INTERACTION_LIFETIME = dt.timedelta(minutes=15)
#: an edit started this close to the token's end might not land: post instead
_MARGIN = dt.timedelta(seconds=30)


def delivery_target(
    interaction: discord.Interaction[Any], card: dict[str, Any], *, ephemeral: bool
) -> dict[str, Any]:
    """What a deliver job needs to answer ``interaction`` from any replica, and what the
    card is made of (``card``: :func:`~bots.chat.check_flow.card_target`)."""
    return {
        "application_id": str(interaction.application_id),
        "token": interaction.token,
        "expires": (interaction.created_at + INTERACTION_LIFETIME).isoformat(),
        "channel_id": str(interaction.channel_id or ""),
        "user_id": str(interaction.user.id),
        "ephemeral": ephemeral,
        **card,
    }


async def post_delivered(
    ctx: DiscordContext, bot: discord.Client, claim: Claim, found: CardState
) -> None:
    """Post a deliver job's verdict (or the failure's sentence) where ``claim`` says."""
    target = claim.target
    content: str | None
    embed: discord.Embed | None = None
    view: discord.ui.View | None = None
    card: VerdictCard | None = None
    outcome = found.outcome
    if isinstance(outcome, Failed):
        content = escape(failure_for(outcome, target))
    else:
        card = card_for(outcome, target)
        content = None
        embed = verdict_embed(card)
        view = card_view(ctx, card)
    expires = dt.datetime.fromisoformat(target["expires"])
    if dt.datetime.now(dt.UTC) < expires - _MARGIN:
        webhook = discord.Webhook.partial(
            int(target["application_id"]), target["token"], client=bot
        )
        try:
            # "@original" is Discord's name for the deferred response of the interaction;
            # discord.py sends it as given, but its stubs take only int message ids.
            await webhook.edit_message(  # type: ignore[call-overload]  # "@original": a str id
                "@original",
                content=content,
                embed=embed,
                view=view or discord.utils.MISSING,
                allowed_mentions=NONE,
            )
            await _record(ctx, card, target, editable=True)
            return
        except discord.HTTPException as exc:
            if exc.code == UNKNOWN_MESSAGE:  # as a live check's (check_flow.finish)
                log.info(
                    "the response of check %s was deleted; nothing more is said", claim.check_id
                )
                return
            if exc.code not in (INVALID_WEBHOOK_TOKEN, UNKNOWN_WEBHOOK) and exc.status != 401:
                raise
    await _post_late(bot, target, content, embed, view)
    await _record(ctx, card, target, editable=False)


async def _record(
    ctx: DiscordContext, card: VerdictCard | None, target: Mapping[str, Any], *, editable: bool
) -> None:
    """Where a delivered card is, and while ``editable`` the token that can edit it, so
    that a moderator's correction reaches it."""
    if card is None:
        return
    place = CardPlace(
        PLATFORM,
        str(target.get("channel_id") or ""),
        "",
        card.verdict,
        private=bool(target.get("ephemeral")),
        token=str(target["token"]) if editable else "",
        token_expires=dt.datetime.fromisoformat(target["expires"]) if editable else None,
    )
    await ctx.service.record_card(card.check_id, place)


async def _post_late(
    bot: discord.Client,
    target: Mapping[str, Any],
    content: str | None,
    embed: discord.Embed | None,
    view: discord.ui.View | None,
) -> None:
    """The token has expired: a DM for a private answer, else a message in the channel
    naming the requester (by id: nothing is fetched first)."""
    user = discord.Object(int(target["user_id"]))
    if target.get("ephemeral"):
        dm = await bot.create_dm(user)
        late = target_words(target)(LATE_PRIVATE)  # the check's
        await dm.send(content=content or late, embed=embed or discord.utils.MISSING)
        return
    channel = bot.get_partial_messageable(int(target["channel_id"]))
    mention = f"<@{user.id}> " if content is None else ""
    await channel.send(
        content=f"{mention}{content or ''}".strip() or None,
        embed=embed or discord.utils.MISSING,
        view=view or discord.utils.MISSING,
        allowed_mentions=discord.AllowedMentions(
            everyone=False, roles=False, replied_user=False, users=[user]
        ),
    )
