"""A changed verdict told to a Discord channel: its cards edited, then one message.

:func:`send_correction` is the Discord sender of :mod:`bots.chat.corrections`. A card
whose interaction token is still valid (Discord keeps it 15 minutes) is edited through
it, and the update follows it as one follow-up message (on a private card, the update
is put on the card itself: a follow-up would not be private). Once every token has
expired, the update is posted in the channel with the card as it now reads, if the bot
may post there; a private card whose token has expired gets nothing (the record keeps
no user id to send a DM to). discord.py waits out Discord's rate limits. A channel the
bot may not post in, or that is gone (Forbidden, NotFound), raises
:class:`~bots.service.records.ChatGoneError`: it is given up at once. Any other
failure is tried again later.
"""

from __future__ import annotations

import datetime as dt
import logging

import discord

from bots.chat.corrections import Notice
from bots.render.card import VerdictCard
from bots.service.records import ChatGoneError, ShownCard

from .buttons import card_view
from .context import DiscordContext
from .deliveries import INVALID_WEBHOOK_TOKEN, UNKNOWN_MESSAGE, UNKNOWN_WEBHOOK
from .render import NONE, escape, verdict_embed

__all__ = ["send_correction"]

log = logging.getLogger(__name__)

#: an edit started this close to a token's end might not land: the channel instead
_MARGIN = dt.timedelta(seconds=30)
_GONE = (INVALID_WEBHOOK_TOKEN, UNKNOWN_WEBHOOK, UNKNOWN_MESSAGE)


def _webhook(bot: discord.Client, shown: ShownCard) -> discord.Webhook | None:
    """The interaction webhook that can still edit ``shown``, if its token is valid."""
    expires = shown.token_expires
    if not shown.token or expires is None or bot.application_id is None:
        return None
    if dt.datetime.now(dt.UTC) >= expires - _MARGIN:
        return None
    return discord.Webhook.partial(bot.application_id, shown.token, client=bot)


async def _edit(
    ctx: DiscordContext, webhook: discord.Webhook, card: VerdictCard, content: str | None
) -> bool:
    """Edit the card through its interaction; ``False`` when it is gone or expired."""
    try:
        # "@original" is the interaction's response (see bots.discord.deliveries).
        await webhook.edit_message(  # type: ignore[call-overload]  # "@original": a str id
            "@original",
            content=content,
            embed=verdict_embed(card),
            view=card_view(ctx, card),
            allowed_mentions=NONE,
        )
    except discord.HTTPException as exc:
        if exc.code in _GONE or exc.status in (401, 404):
            log.info("card of check %s not edited: %s", card.check_id, exc.text)
            return False
        raise
    return True


async def send_correction(ctx: DiscordContext, bot: discord.Client, notice: Notice) -> None:
    """Edit the channel's cards and tell it once (see the module's docstring).

    Raises:
        ChatGoneError: the channel can never be told.
        discord.HTTPException: a failure worth trying again.
    """
    sentence = escape(notice.sentence)
    public: discord.Webhook | None = None  # the newest public card edited
    told_privately = False
    for shown, card in notice.cards:
        webhook = _webhook(bot, shown)
        content = sentence if shown.private else None  # a private card says it on itself
        if webhook is None or not await _edit(ctx, webhook, card, content):
            continue
        told_privately = told_privately or shown.private
        public = public if shown.private else webhook
    if public is not None:
        await public.send(sentence, allowed_mentions=NONE, suppress_embeds=True)
        return
    if told_privately:
        return
    # The newest public card, to post the update beside (a private one cannot be seen).
    shown, card = next(
        ((s, c) for s, c in reversed(notice.cards) if not s.private), notice.cards[-1]
    )
    if shown.private or not notice.chat:
        log.info("a private card of check %s could no longer be corrected", card.check_id)
        return
    view = card_view(ctx, card)
    channel = bot.get_partial_messageable(int(notice.chat))
    try:
        await channel.send(content=sentence, allowed_mentions=NONE, suppress_embeds=True)
        await channel.send(embed=verdict_embed(card), view=view, allowed_mentions=NONE)
    except (discord.Forbidden, discord.NotFound) as exc:
        raise ChatGoneError(exc.text) from exc
