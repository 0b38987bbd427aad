"""The card's buttons: Debate, Evidence, Claims, 👍 / 👎, and Cancel on "checking…".

Callback data is ``"<letter>:<check id>"`` and nothing else; the check is read from
SQLite, so buttons work after a restart. A check is only shown in the chat it was
asked in: a forged or foreign id gets "not found". Every query is answered.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from telegram import CallbackQuery, Message, Update
from telegram.error import BadRequest
from telegram.ext import BaseHandler, CallbackQueryHandler, ContextTypes

from storage.rows import CheckRow

from .card import section
from .telegram_check import NO_PREVIEW
from .telegram_render import BUTTON_ACTIONS, card_keyboard, section_messages
from .telegram_state import PLATFORM, BotState, bot_state

__all__ = ["NOT_FOUND", "button_handlers"]

log = logging.getLogger(__name__)

NOT_FOUND = "This check was not found in this chat."
_DATA = re.compile(r"(?P<action>[a-z]):(?P<check_id>[A-Za-z0-9_-]{1,32})")


def _opened_key(check_id: str, kind: str) -> str:
    return f"opened:{check_id}:{kind}"


async def on_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Route a button tap; the query is always answered, with a note when there is one."""
    query = update.callback_query
    if query is None:
        return
    try:
        note, alert = await _route(bot_state(context), query)
    except Exception:
        log.exception("button %r failed", query.data)
        note, alert = "Something went wrong on our side; the error was logged.", True
    await query.answer(note or None, show_alert=alert)


async def _route(state: BotState, query: CallbackQuery) -> tuple[str, bool]:
    match = _DATA.fullmatch(query.data or "")
    message = query.message
    action = BUTTON_ACTIONS.get(match["action"]) if match else None
    if match is None or action is None or message is None:
        return NOT_FOUND, True
    row = state.service.store.get_check(match["check_id"])
    if row is None or row.platform != PLATFORM or row.chat != str(message.chat.id):
        log.info("button for an unknown or foreign check in chat %s", message.chat.id)
        return NOT_FOUND, True
    if action == "cancel":
        return _cancel(state, row, query.from_user.id)
    if action in ("up", "down"):
        return await _vote(state, row, query, 1 if action == "up" else -1)
    if not isinstance(message, Message):  # too old to reply to
        return "This card is too old; forward the post again.", True
    return await _open(state, row, message, action)


def _cancel(state: BotState, row: CheckRow, user_id: int) -> tuple[str, bool]:
    if state.user_hash(user_id) != row.requester:
        return "Only the person who asked can cancel this check.", True
    handle = state.service.handle(row.id)
    if handle is None or handle.done:
        return "This check is no longer running.", False
    handle.cancel()
    return "Cancelling…", False


async def _vote(
    state: BotState, row: CheckRow, query: CallbackQuery, vote: int
) -> tuple[str, bool]:
    store = state.service.store
    original = row.repeat_of or row.id  # votes on one verdict add up across its repeats
    store.add_feedback(original, state.user_hash(query.from_user.id), vote)
    try:
        await query.edit_message_reply_markup(
            card_keyboard(row.id, store.feedback_counts(original))
        )
    except BadRequest as exc:
        if "not modified" not in exc.message.lower():  # the same vote again: nothing changes
            raise
    return "Thanks, your vote is recorded.", False


async def _open(state: BotState, row: CheckRow, card: Message, kind: str) -> tuple[str, bool]:
    """Post a section as replies to the card, once: a second tap points back to it."""
    store = state.service.store
    key = _opened_key(row.id, kind)
    async with state.lock(f"{row.chat}:{key}"):
        if store.get_chat_setting(PLATFORM, row.chat, key) is not None:
            return f"The {kind} is already in this thread.", False
        found = state.service.report_for(row.id)
        if found is None:
            return "The details of this check have expired.", True
        sent = []
        for text in section_messages(section(kind, found[1])):
            reply = await card.reply_html(text, do_quote=True, link_preview_options=NO_PREVIEW)
            sent.append(reply.message_id)
        store.set_chat_setting(PLATFORM, row.chat, key, sent)
    return "", False


def button_handlers() -> list[BaseHandler[Update, Any, Any]]:
    return [CallbackQueryHandler(on_button)]
