"""The card's buttons: Debate, Evidence, Claims, 👍 / 👎, and Cancel on "checking…".

Callback data is ``"<letter>:<check id>"`` and nothing else; the check is read from
the store (off the event loop), so buttons work after a restart. A check is only shown
in the chat it was asked in: a forged or foreign id gets "not found". Every query is
answered, and at once: a section is posted only after its query was answered.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from telegram import CallbackQuery, Message, Update
from telegram.error import BadRequest, TelegramError
from telegram.ext import BaseHandler, CallbackQueryHandler, ContextTypes

from bots.render.sections import already_shown, section
from bots.render.sentences import error_sentence
from bots.render.words import N_, Words, words_for
from bots.service.records import CheckRow, Requester

from .card_edits import card_buttons
from .context import PLATFORM, TelegramContext, context_of, tappers_words
from .render import BUTTON_ACTIONS, NO_PREVIEW, section_messages

__all__ = ["GONE", "NOT_FOUND", "button_handlers"]

log = logging.getLogger(__name__)

# Said in the check's language once it is read, else in the tapper's app language.
NOT_FOUND = N_("This check was not found in this chat.")
#: a tap on a card whose message was deleted, or is too old for the bot to reach
GONE = N_("This card is gone: forward the post again.")
NOT_YOURS = N_("Only the person who asked can cancel this check.")
NOT_RUNNING = N_("This check is no longer running.")
CANCELLING = N_("Cancelling…")
VOTED = N_("Thanks, your vote is recorded.")
EXPIRED = N_("The details of this check have expired.")
_DATA = re.compile(r"(?P<action>[a-z]):(?P<check_id>[A-Za-z0-9_-]{1,32})")

#: what a button does after its query is answered (posting a section), if anything
FollowUp = Callable[[], Awaitable[None]] | None


async def on_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Route a button tap; the query is always answered, with a note when there is one."""
    query = update.callback_query
    if query is None:
        return
    follow_up: FollowUp = None
    try:
        note, alert, follow_up = await _route(context_of(context), query)
    except Exception as exc:
        log.exception("button %r failed", query.data)
        note, alert = error_sentence(exc), True
    try:
        await query.answer(note or None, show_alert=alert)
    except TelegramError as exc:  # e.g. too old: what the button does is still done
        log.warning("could not answer button %r: %s", query.data, exc)
    if follow_up is not None:
        await follow_up()


async def _route(ctx: TelegramContext, query: CallbackQuery) -> tuple[str, bool, FollowUp]:
    match = _DATA.fullmatch(query.data or "")
    message = query.message
    action = BUTTON_ACTIONS.get(match["action"]) if match else None
    tappers = tappers_words(query.from_user)
    if match is None or action is None or message is None:
        return tappers(NOT_FOUND), True, None
    row = await ctx.service.chats.check(match["check_id"], PLATFORM, str(message.chat.id))
    if row is None:
        where = ctx.log_chat(message.chat.id)
        log.info("button for an unknown or foreign check in chat %s", where)
        return tappers(NOT_FOUND), True, None
    words = words_for(row.language)
    if action == "cancel":
        return (*_cancel(ctx, row, query.from_user.id, words), None)
    # Telegram names a deleted or too old message with date 0: is_accessible says so.
    if not message.is_accessible or not isinstance(message, Message):
        log.info("button on an inaccessible card in chat %s", ctx.log_chat(message.chat.id))
        return words(GONE), True, None
    if action in ("up", "down"):
        return (*await _vote(ctx, row, query, 1 if action == "up" else -1, words), None)
    return await _open(ctx, row, message, action, words)


def _cancel(ctx: TelegramContext, row: CheckRow, user_id: int, words: Words) -> tuple[str, bool]:
    if ctx.user_hash(user_id) != row.requester:
        return words(NOT_YOURS), True
    handle = ctx.service.handle(row.id)
    if handle is None or handle.done:
        return words(NOT_RUNNING), False
    handle.cancel()
    return words(CANCELLING), False


async def _vote(
    ctx: TelegramContext, row: CheckRow, query: CallbackQuery, vote: int, words: Words
) -> tuple[str, bool]:
    votes = await ctx.service.chats.vote(row, Requester(PLATFORM, str(query.from_user.id)), vote)
    try:
        await query.edit_message_reply_markup(card_buttons(ctx, row.id, votes, words))
    except BadRequest as exc:
        if "not modified" not in exc.message.lower():  # the same vote again: nothing changes
            raise
    return words(VOTED), False


async def _open(
    ctx: TelegramContext, row: CheckRow, card: Message, kind: str, words: Words
) -> tuple[str, bool, FollowUp]:
    """Mark a section opened and return how to post it as replies to the card, once: a
    second tap, even while the first one's messages go out, points back to it.

    The mark is claimed in the store (:meth:`~bots.service.chats.ChatRecords.claim_mark`),
    so of two taps handled at the same time, by this process or by another replica on
    the same store, one posts the section and the other points back to it.
    """
    chats = ctx.service.chats
    if not await chats.claim_mark(row.id, kind, []):  # opened; the message ids follow
        return already_shown(kind, words), False, None
    found = await ctx.service.report_for(row.id)
    if found is None:
        await chats.set_mark(row.id, kind, None)
        return words(EXPIRED), True, None
    messages = section_messages(section(kind, found[1], words))
    return "", False, partial(_post, ctx, row.id, kind, card, messages)


async def _post(
    ctx: TelegramContext, check_id: str, kind: str, card: Message, messages: list[str]
) -> None:
    """Post a section's messages (paced by the rate limiter), then record their ids. If
    posting fails or is cut short, the mark is cleared so that a later tap tries again."""
    sent = []
    try:
        for text in messages:
            reply = await card.reply_html(text, do_quote=True, link_preview_options=NO_PREVIEW)
            sent.append(reply.message_id)
    except BaseException:
        await ctx.service.chats.set_mark(check_id, kind, None)  # written even if cut short
        raise
    await ctx.service.chats.set_mark(check_id, kind, sent)


def button_handlers() -> list[BaseHandler[Update, Any, Any]]:
    return [CallbackQueryHandler(on_button)]
