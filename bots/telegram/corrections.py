"""A changed verdict told to a Telegram chat: its cards edited in place, then one reply.

:func:`send_correction` is the Telegram sender of :mod:`bots.chat.corrections`: each
card the chat was shown is edited into the card as it now reads (a card deleted or too
old to edit is passed over), then one short reply to the newest card says what changed.
The application's rate limiter paces the calls (per chat and overall) and retries a
429. A chat the bot may no longer post in (it was removed, or blocked: "Forbidden"), or
that is gone ("chat not found"), raises :class:`~bots.service.records.ChatGoneError`:
it is given up at once. Anything else (a 429 the limiter gave up on, a 5xx, the
network) is raised as it is, and the chat is tried again later.
"""

from __future__ import annotations

from telegram import Bot, ReplyParameters
from telegram.error import BadRequest, Forbidden

from bots.chat.corrections import Notice
from bots.service.records import ChatGoneError

from .card_edits import card_message, edit_card
from .context import TelegramContext
from .render import NO_PREVIEW, quote_text

__all__ = ["send_correction"]

#: what Telegram says of a chat that is gone (a ``BadRequest``, not a ``Forbidden``)
_CHAT_GONE = "chat not found"


async def send_correction(ctx: TelegramContext, bot: Bot, notice: Notice) -> None:
    """Edit the chat's cards and reply once to the newest (see the module's docstring).

    Raises:
        ChatGoneError: the chat can never be told.
        TelegramError: a failure worth trying again (a network error, a 5xx, a 429 the
            rate limiter gave up on).
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
        raise ChatGoneError(exc.message) from exc
    except BadRequest as exc:
        if _CHAT_GONE in exc.message.lower():
            raise ChatGoneError(exc.message) from exc
        raise
