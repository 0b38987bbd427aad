"""A shared card opened: ``/start c_<token>`` in a private chat shows the check's card.

The token (:mod:`.share_links`) opens only a Telegram check whose report is still
stored (not purged, not failed). The card is made anew for the chat that opened it: a
row of its own, an exact repeat of the check's original, asked by whoever opened the
link in their private chat. So the card is that chat's like any other: its buttons
find the check in this chat, a reply to it is a follow-up question, a correction of
the verdict reaches it, and its report page (where ``[site] public_url`` is set) is
the new row's, never the shared check's. Nothing of the chat it was shared from comes
with it: not the post's text nor its link (the new row holds none:
:meth:`~bots.service.checks.CheckService.share`), not its origin (where the post was forwarded
from), not its date, not that chat's moderators' review (a review applies where it was
made: :mod:`storage.reviews`), and of the report only what any other chat is shown
(:mod:`storage.other_chats`); only a reviewer named in the settings may review it (no
one else may in a private chat: :mod:`.reviews`). The new row is dated as the shared
check's original, so the purge takes it with the original, however often the link is
opened.

Opening a shared card is a request like any other: the limits admit it first (it is
answered from the store, as a repeat is), and a refusal is said in one sentence.
"""

from __future__ import annotations

import logging

from telegram import Message

from bots.chat.check_flow import card_for
from bots.render.sentences import error_sentence
from bots.render.words import N_, words_for
from bots.service.records import CardPlace, Requester
from bots.service.refusals import RateLimitedError

from .card_edits import card_message
from .context import PLATFORM, TelegramContext, read_chat_language
from .render import NO_PREVIEW, quote_text
from .share_links import SHARE_PREFIX, shared_check_id

__all__ = ["NOT_SHARED", "open_shared"]

log = logging.getLogger(__name__)

NOT_SHARED = N_(
    "This shared check was not found: its link is incomplete, or the check has expired. "
    "Forward the post to me to have it checked."
)


async def open_shared(ctx: TelegramContext, message: Message, argument: str) -> None:
    """Answer ``/start c_<token>`` (``argument``) in a private chat with the shared
    check's card, or one sentence saying it was not found or a limit refused it."""
    user = message.from_user
    if user is None:
        return
    chat = str(message.chat_id)
    words = words_for(await read_chat_language(ctx, message))
    check_id = shared_check_id(ctx.service.secret, argument.removeprefix(SHARE_PREFIX))
    requester = Requester(PLATFORM, str(user.id), chat, True)
    try:
        copied = None if check_id is None else await ctx.service.share(check_id, requester)
        if copied is None:
            log.info("a shared link in chat %s opened no check", ctx.log_chat(chat))
            await message.reply_text(words(NOT_SHARED), do_quote=False)
            return
        outcome, votes, language, left = copied
        card = card_for(outcome, {"checks_left": left, "language": language})
        text, keyboard = card_message(ctx, card, votes)
        sent = await message.reply_html(
            text, reply_markup=keyboard, link_preview_options=NO_PREVIEW, do_quote=False
        )
        place = CardPlace(PLATFORM, chat, str(sent.message_id), card.verdict)
        await ctx.service.record_card(card.check_id, place)
    except RateLimitedError as exc:
        log.info("a shared link in chat %s refused: %s", ctx.log_chat(chat), exc)
        await message.reply_html(quote_text(error_sentence(exc, words)), do_quote=False)
