"""Guest mode (Bot API 10.0): someone in a chat the bot is not in replies to a post and
mentions the bot; Telegram sends that message as :attr:`telegram.Update.guest_message`.

It is checked as a mention in a reply is (:func:`~.check_flow.check_message`, the
service's limits and the group's cooldown included), but the bot cannot post in that
chat: the one answer goes back with :meth:`telegram.Bot.answer_guest_query`, a short
card (the verdict line, the summary cut short and a link to the report page when
``[site] public_url`` gives one), or one sentence (the help line when the mention
replies to nothing, what went wrong, a limit). No progress is shown: a guest query is
answered once.

The handler runs before every other (:data:`GUEST_GROUP`) and stops the update there:
the others would take a guest message for a mention and reply into the chat.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram import (
    Bot,
    InlineQueryResultArticle,
    InputTextMessageContent,
    Message,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import TelegramError
from telegram.ext import ApplicationHandlerStop, BaseHandler, ContextTypes, MessageHandler, filters

from bots.chat.check_flow import CheckRequest, card_for, card_target, failure_for
from bots.render.card import VerdictCard
from bots.render.sentences import error_sentence
from bots.service.records import CardState, Claim, Failed
from bots.service.refusals import RateLimitedError

from .check_flow import Asked, TelegramScreen, check_message
from .context import TelegramContext, context_of
from .deliveries import post_delivered
from .images import has_image
from .inputs import (
    HOW_TO,
    asker_of,
    chat_words,
    cooldown_left,
    cooldown_refusal,
    images_of,
    replied_to,
    restarting,
)
from .posts import NOTHING_TO_CHECK, post_text
from .render import NO_PREVIEW, clip_text, quote_text, safe_href

__all__ = [
    "GUEST_GROUP",
    "GuestScreen",
    "answer_guest",
    "guest_handler",
    "guest_html",
    "post_delivered_or_guest",
]

log = logging.getLogger(__name__)

#: the handler group of guest messages: before the review notes' (-1) and the rest (0)
GUEST_GROUP = -2
_MAX_HEAD = 200  # the verdict line's headline and confidence
_MAX_SUMMARY = 600  # a guest card's summary, cut short: the report page has the rest
_MAX_TITLE = 64  # the result's title (what Telegram may show while it is sent)


def guest_html(card: VerdictCard, report_url: str = "") -> str:
    """The short card a guest query gets: the verdict line, the summary cut short, and a
    link to the report page when there is one; in the card's words."""
    words = card.words
    line = f"{card.icon} <b>{clip_text(card.headline, _MAX_HEAD)}</b>"
    if card.confidence:
        said = words("confidence {confidence}", confidence=card.confidence)
        line += f" · {clip_text(said, _MAX_HEAD)}"
    parts = [line]
    if card.summary:
        parts.append(clip_text(card.summary, _MAX_SUMMARY))
    href = safe_href(report_url)
    if href:
        parts.append(f'<a href="{href}">{quote_text(words("Full report"))}</a>')
    return "\n\n".join(parts)


async def answer_guest(bot: Bot, query_id: str, html: str, title: str) -> None:
    """Answer guest query ``query_id`` with one message, ``html`` (Telegram HTML)."""
    result = InlineQueryResultArticle(
        id=query_id[:64] or "answer",
        title=title[:_MAX_TITLE] or "ZoFia",
        input_message_content=InputTextMessageContent(
            html, parse_mode=ParseMode.HTML, link_preview_options=NO_PREVIEW
        ),
    )
    await bot.answer_guest_query(query_id, result)


async def _say(ctx: TelegramContext, message: Message, sentence: str) -> None:
    """One sentence in answer to the guest ``message``; never raises."""
    try:
        await answer_guest(
            message.get_bot(), message.guest_query_id or "", quote_text(sentence), sentence
        )
    except TelegramError as exc:
        where = ctx.log_chat(message.chat_id)
        log.warning("could not answer a guest query in chat %s: %s", where, exc)


class GuestScreen(TelegramScreen):
    """A check shown as the one answer to the guest query of ``anchor`` (the guest
    message): no progress, then the short card or a sentence. A check queued on
    workers is answered by the deliver job (:func:`post_delivered_or_guest`)."""

    @property
    def query_id(self) -> str:
        return self.anchor.guest_query_id or ""

    async def open_reading(self, images: int, *, voice: bool = False) -> None:
        return None  # one answer only: the card

    async def show_waiting(self, ahead: int) -> None:
        return None  # one answer only (and a guest message is never in a private line)

    async def open_progress(self, check_id: str) -> None:
        return None

    async def show_progress(self, lines: list[str]) -> bool:
        return False  # nothing to edit: the answer is sent once

    async def show_card(self, card: VerdictCard) -> None:
        """The short card, as the query's answer (no moderator's correction reaches it:
        it is not a message of a chat the bot is in)."""
        text = guest_html(card, self.ctx.report_url(card.check_id))
        try:
            await answer_guest(self.anchor.get_bot(), self.query_id, text, card.headline)
        finally:
            self.opened()

    async def say(self, sentence: str) -> None:
        try:
            await _say(self.ctx, self.anchor, sentence)
        finally:
            self.opened()

    async def refuse(self, exc: RateLimitedError) -> None:
        """A limit's refusal, said at once: the query has no burst to join."""
        await self.say(error_sentence(exc, self.words))

    def delivery_target(self, request: CheckRequest, checks_left: int | None) -> dict[str, Any]:
        card = card_target(request.message, checks_left)
        return {"chat_id": self.chat_id, "guest_query_id": self.query_id, **card}


async def post_delivered_or_guest(
    ctx: TelegramContext, bot: Bot, claim: Claim, found: CardState
) -> None:
    """A deliver job's card (:func:`~.deliveries.post_delivered`); for a guest query's
    check (its target names the query), the query's one answer."""
    target = claim.target
    query_id = str(target.get("guest_query_id") or "")
    if not query_id:
        await post_delivered(ctx, bot, claim, found)
        return
    if isinstance(found.outcome, Failed):
        sentence = failure_for(found.outcome, target)
        await answer_guest(bot, query_id, quote_text(sentence), sentence)
        return
    card = card_for(found.outcome, target)
    text = guest_html(card, ctx.report_url(card.check_id))
    await answer_guest(bot, query_id, text, card.headline)


async def _ask(ctx: TelegramContext, message: Message) -> None:
    """Check the post the guest ``message`` replies to; the help line, "nothing to
    check" and the cooldown's sentence are said in the chat's words
    (:func:`~.inputs.chat_words`)."""
    target = replied_to(message)
    text = post_text(target) if target is not None else ""
    if target is None or (not text and not has_image(target)):
        words = await chat_words(ctx, message)  # "@bot hello", not in a reply: the help line
        await _say(ctx, message, words(HOW_TO if target is None else NOTHING_TO_CHECK))
        return
    left = cooldown_left(ctx, message, asked="guest request")  # as for a mention
    if left:
        sentence, _ = await cooldown_refusal(ctx, message, left)
        await _say(ctx, message, sentence)
        return
    asked = Asked(target, text, asker_of(message), message, images=images_of(target))
    work = check_message(ctx, asked, screen_type=GuestScreen)
    if not ctx.work.spawn(work):  # shutdown has begun
        await _say(ctx, message, restarting(message))


async def on_guest_message(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A guest message: the post it replies to is checked, and no other handler sees it."""
    message = update.guest_message
    if message is not None and message.guest_query_id:
        try:
            await _ask(context_of(context), message)
        except Exception:  # a store that cannot be read: logged; the others never run
            where = context_of(context).log_chat(message.chat_id)
            log.exception("guest message in chat %s failed", where)
    raise ApplicationHandlerStop


def guest_handler() -> BaseHandler[Update, Any, Any]:
    """The guest messages' handler; add it in :data:`GUEST_GROUP`, before every other."""
    return MessageHandler(filters.UpdateType.GUEST_MESSAGE, on_guest_message)
