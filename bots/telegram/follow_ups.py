"""Follow-up questions: a reply to one of the bot's verdict cards asks about that check.

In a private chat any text reply to a card is a question ("why?", "which source?"); in a
group, a reply to a card that mentions the bot. The card's keyboard carries its check id
(callback data ``"<letter>:<check id>"``, :data:`~.render.BUTTON_ACTIONS`); the question
goes to :meth:`~bots.service.checks.CheckService.follow_up`, which charges it like a check,
and the answer comes back in a reply: a few sentences, the evidence they cite named as
the card names its sources, and those sources listed. A burst of refused questions gets
one refusal, and in a group a fixed sentence (how to ask, a check with no report) is
said at most once per the group's cooldown.
What is not Telegram's (the question's cleanup, the naming of sources, the sentences said
instead of an answer) is :mod:`bots.chat.follow_ups`, shared with Discord.

The handler is tried before the check handlers (:mod:`.inputs`): a reply to a card is a
question, not a post to check.
"""

from __future__ import annotations

import contextlib
import logging
import re
from typing import Any

from telegram import Message, MessageEntity, Update
from telegram.constants import ChatAction, ChatType
from telegram.error import TelegramError
from telegram.ext import BaseHandler, ContextTypes, MessageHandler, filters

from bots.chat.follow_ups import ASK_HOW, ASKING, Said, ask, named_answer, question_text, say_now
from bots.render.sentences import source_label
from bots.service.records import FollowUp, Requester
from zofia_engine.report import EvidenceItem

from .context import PLATFORM, TelegramContext, context_of, read_chat_language
from .inputs import asker_of, chat_words, restarting
from .render import BUTTON_ACTIONS, NO_PREVIEW, clip_text, quote_text, safe_href

__all__ = ["ASK_HOW", "card_check_id", "follow_up_handlers", "follow_up_html"]

log = logging.getLogger(__name__)

#: the buttons only a verdict card has (not "checking…"'s Cancel)
_CARD_ACTIONS = {letter for letter, action in BUTTON_ACTIONS.items() if action != "cancel"}
_DATA = re.compile(r"(?P<action>[a-z]):(?P<check_id>[A-Za-z0-9_-]{1,32})")
_MAX_ANSWER = 2000  # markup; the engine's answer is a few sentences
_MAX_SOURCE = 240


def card_check_id(message: Message | None, bot_id: int) -> str | None:
    """The check id of ``message`` when it is one of the bot's verdict cards (its
    keyboard's callback data names it), else ``None``."""
    if message is None or message.from_user is None or message.from_user.id != bot_id:
        return None
    markup = message.reply_markup
    if markup is None:
        return None
    for row in markup.inline_keyboard:
        for button in row:
            found = _DATA.fullmatch(str(button.callback_data or ""))
            if found is not None and found["action"] in _CARD_ACTIONS:
                return found["check_id"]
    return None


def _mentions(message: Message, username: str) -> bool:
    me = f"@{username}".casefold()
    mentions = message.parse_entities([MessageEntity.MENTION]).values()
    return me in (mention.casefold() for mention in mentions)


class _ReplyToACard(filters.MessageFilter):
    """A text reply to one of this bot's verdict cards: in a private chat, any; in a
    group, one that mentions the bot."""

    def filter(self, message: Message) -> bool:
        bot = message.get_bot()
        if card_check_id(message.reply_to_message, bot.id) is None:
            return False
        return message.chat.type == ChatType.PRIVATE or _mentions(message, bot.username)


def _question(message: Message, username: str) -> str:
    """The question: the reply's text without the mention of the bot."""
    return question_text(message.text or "", [f"@{username}"])


def _source_line(item: EvidenceItem) -> str:
    """A cited source as the card lists its links: ``• title (site)``, linked when safe."""
    shown = clip_text(source_label(item), _MAX_SOURCE)
    href = safe_href(item.url)
    return f'• <a href="{href}">{shown}</a>' if href else f"• {shown}"


def follow_up_html(followed: FollowUp) -> str:
    """The answer as Telegram HTML: its sentences (every string escaped), then the
    sources it cites; the fixed sentence alone when the report does not answer."""
    if not followed.answered:
        return quote_text(followed.text)
    lines = [clip_text(named_answer(followed), _MAX_ANSWER)]
    if followed.sources:
        lines += ["", "<b>Sources</b>", *map(_source_line, followed.sources)]
    return "\n".join(lines)


def _said_now(ctx: TelegramContext, message: Message, said: Said) -> bool:
    """Whether ``said`` is said to ``message`` now (:func:`~bots.chat.follow_ups.say_now`:
    one refusal for a user's burst, a group's fixed sentences once per its cooldown)."""
    private = message.chat.type == ChatType.PRIVATE
    now = say_now(
        ctx.cooldowns,
        said,
        chat=str(message.chat_id),
        user=str(asker_of(message)),
        group_cooldown_s=None if private else ctx.settings.chat_cooldown_s,
    )
    if not now:
        where = ctx.log_chat(message.chat_id)
        log.info("follow-up in chat %s: %s sentence left unsaid", where, said.kind)
    return now


async def _answer(ctx: TelegramContext, message: Message, check_id: str, question: str) -> None:
    """Ask the service, and reply with the answer or one sentence saying why not (unless
    that sentence was said moments ago, :func:`_said_now`)."""
    chat_id = message.chat_id
    private = message.chat.type == ChatType.PRIVATE
    requester = Requester(PLATFORM, str(asker_of(message)), str(chat_id), private)
    with contextlib.suppress(TelegramError):  # a courtesy while the model answers
        await message.reply_chat_action(ChatAction.TYPING)
    language = read_chat_language(ctx, message)  # read by ask, which says its failure
    got = await ask(ctx.service, check_id, question, requester, language=language)
    if isinstance(got, Said) and not _said_now(ctx, message, got):
        return
    text = follow_up_html(got) if isinstance(got, FollowUp) else quote_text(got.text)
    try:
        await message.reply_html(text, do_quote=True, link_preview_options=NO_PREVIEW)
    except TelegramError as exc:
        where = ctx.log_chat(chat_id)
        log.warning("could not answer a follow-up in chat %s: %s", where, exc)


async def on_follow_up(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A reply to a card: its question answered in the background (shutdown waits)."""
    message = update.effective_message
    if message is None:
        return
    check_id = card_check_id(message.reply_to_message, context.bot.id)
    if check_id is None:
        return
    question = _question(message, context.bot.username)
    ctx = context_of(context)
    if not question:
        if _said_now(ctx, message, ASKING):
            said = (await chat_words(ctx, message))(ASK_HOW)
            await message.reply_text(said, do_quote=True)
        return
    if not ctx.work.spawn(_answer(ctx, message, check_id, question)):
        await message.reply_text(restarting(message), do_quote=True)  # shutdown has begun


def follow_up_handlers() -> list[BaseHandler[Update, Any, Any]]:
    """The handler of follow-up questions; put it before the check handlers."""
    return [
        MessageHandler(
            filters.TEXT & ~filters.COMMAND & ~filters.FORWARDED & _ReplyToACard(),
            on_follow_up,
        )
    ]
