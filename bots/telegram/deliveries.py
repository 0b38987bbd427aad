"""Cards of a queued deployment's Telegram checks, posted by whichever replica runs the
``deliver`` job.

The request records the chat and the "checking…" message to edit into the card (or,
for an unasked check, which shows no progress, the post to reply to and the chat's
least confidence for a card). The job edits that message into the verdict card, or the
failure's sentence; an unasked check gets the card, a reaction on the post or nothing,
as :func:`~bots.chat.quiet.group_answer` rules.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from telegram import Bot, InlineKeyboardMarkup, ReplyParameters
from telegram.constants import ReactionEmoji
from telegram.error import BadRequest, TelegramError

from bots.chat.check_flow import card_for, failure_for
from bots.chat.quiet import DEFAULT_MIN_CONFIDENCE, min_confidence_of, unasked_gets_card
from bots.render.card import VerdictCard
from bots.service.records import CardPlace, CardState, Claim, Failed

from .card_edits import card_message, edit_card, uneditable
from .context import PLATFORM, TelegramContext
from .render import NO_PREVIEW, quote_text

__all__ = ["REACTION", "delivery_target", "post_delivered", "react"]

log = logging.getLogger(__name__)

#: the quiet answer to a group's auto-check that gets no card: the bot looked
REACTION = ReactionEmoji.EYES


async def react(ctx: TelegramContext, bot: Bot, chat_id: int, message_id: int) -> None:
    """Put :data:`REACTION` on a post; never raises (a group may allow no reactions,
    or not this one: the post then simply gets none)."""
    try:
        await bot.set_message_reaction(chat_id, message_id, reaction=REACTION)
    except TelegramError as exc:
        log.warning("could not react to a post in chat %s: %s", ctx.log_chat(chat_id), exc)


def delivery_target(
    chat_id: int,
    card: dict[str, Any],
    *,
    message_id: int | None = None,
    reply_to: int | None = None,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
) -> dict[str, Any]:
    """What a deliver job needs to post a card in ``chat_id`` from any replica: the
    ``message_id`` of the "checking…" message to edit, and the message it answers
    (``reply_to``: a card sent anew replies to it, should "checking…" be gone); or, for
    an unasked check, the message to reply to (or react to) and the chat's
    ``min_confidence`` for a card; and what the card is made of (``card``:
    :func:`~bots.chat.check_flow.card_target`)."""
    target: dict[str, Any] = {"chat_id": chat_id, **card, "reply_to": reply_to}
    if message_id is not None:
        target["message_id"] = message_id
    else:
        target.update(unasked=True, min_confidence=min_confidence)
    return target


async def post_delivered(ctx: TelegramContext, bot: Bot, claim: Claim, found: CardState) -> None:
    """A deliver job's card: edit the "checking…" message it names into the verdict card
    (or the failure's sentence), or, for an unasked check, reply to the post or react to
    it (:func:`~bots.chat.quiet.group_answer`, with the target's least confidence: a
    target recorded before it held one gets the default). Editing to what the message
    already shows is not an error: a retried job may do it. A "checking…" message that
    can no longer be edited (deleted, too old: :func:`~.card_edits.uneditable`) is
    replaced by a new message, in reply to the request; any other refusal fails the job,
    to be retried."""
    target = claim.target
    chat_id = int(target["chat_id"])
    keyboard: InlineKeyboardMarkup | None = None
    card: VerdictCard | None = None
    outcome = found.outcome
    if isinstance(outcome, Failed):
        if target.get("unasked"):
            return
        text = quote_text(failure_for(outcome, target))
    else:
        if target.get("unasked"):
            least = min_confidence_of(target.get("min_confidence"))
            reaction = functools.partial(react, ctx, bot, chat_id, int(target["reply_to"]))
            if not await unasked_gets_card(outcome.report, least, reaction):
                return
        card = card_for(outcome, target)
        text, keyboard = card_message(ctx, card)
    if "message_id" in target:
        where = int(target["message_id"])
        try:
            await edit_card(
                bot, chat_id, where, text, keyboard, check_id=claim.check_id, pass_over_gone=False
            )
        except BadRequest as exc:
            if not uneditable(exc):
                raise
            log.info("check %s: its progress message is gone (%s); sent anew", claim.check_id, exc)
            where = await _send(bot, chat_id, text, keyboard, target.get("reply_to"))
    else:
        where = await _send(bot, chat_id, text, keyboard, target.get("reply_to"))
    if card is not None:  # where it is, so that a moderator's correction reaches it
        place = CardPlace(PLATFORM, str(chat_id), str(where), card.verdict)
        await ctx.service.record_card(card.check_id, place)


async def _send(
    bot: Bot, chat_id: int, text: str, keyboard: InlineKeyboardMarkup | None, reply_to: Any
) -> int:
    """Send the card (or the sentence) as a new message, in reply to ``reply_to`` if it
    is still there; its message id."""
    reply = None
    if reply_to is not None:
        reply = ReplyParameters(int(reply_to), allow_sending_without_reply=True)
    sent = await bot.send_message(
        chat_id,
        text,
        parse_mode="HTML",
        reply_markup=keyboard,
        link_preview_options=NO_PREVIEW,
        reply_parameters=reply,
    )
    return sent.message_id
