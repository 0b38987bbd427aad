"""A changed verdict told to a Telegram chat: its cards edited in place, then one reply.

:func:`send_correction` is the Telegram sender of :mod:`bots.common.corrections`: each
card the chat was shown is edited into the card as it now reads (a card deleted or too
old to edit is passed over), then one short reply to the newest card says what changed.
The application's rate limiter paces the calls (per chat and overall) and retries a
429. A chat the bot may no longer post in (it was removed, or blocked) is given up:
nobody there can be told.
"""

from __future__ import annotations

import logging

from telegram import Bot, ReplyParameters
from telegram.error import Forbidden

from bots.common.corrections import Notice

from .card_edits import card_message, edit_card
from .context import TelegramContext
from .render import NO_PREVIEW, quote_text

__all__ = ["send_correction"]

log = logging.getLogger(__name__)


async def send_correction(ctx: TelegramContext, bot: Bot, notice: Notice) -> None:
    """Edit the chat's cards and reply once to the newest (see the module's docstring).

    Raises:
        TelegramError: a failure worth trying again (a network error, a 429 the rate
            limiter gave up on); what cannot change on a retry is logged instead.
    """
    chat_id = int(notice.chat)
    newest = int(notice.cards[-1][0].message)
    try:
        for shown, card in notice.cards:  # one deleted, or too old to edit: the reply says it
            text, keyboard = card_message(ctx, card, notice.votes)
            message_id = int(shown.message)
            await edit_card(bot, chat_id, message_id, text, keyboard, check_id=card.check_id)
        await bot.send_message(
            chat_id,
            quote_text(notice.sentence),
            parse_mode="HTML",
            link_preview_options=NO_PREVIEW,
            reply_parameters=ReplyParameters(newest, allow_sending_without_reply=True),
        )
    except Forbidden as exc:
        log.info("chat %s can no longer be told of a correction: %s", chat_id, exc.message)
