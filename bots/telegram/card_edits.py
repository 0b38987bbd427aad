"""A verdict card as Telegram shows it, and the edit of a message the bot sent into it.

:func:`card_message` is the card's HTML and keyboard (its votes, its "Full report" link,
its Share button, in its words); :func:`edit_card` edits a message into a card (or one
sentence), written once for the deliver job, a moderator's review and a correction.
"""

from __future__ import annotations

import logging

from telegram import Bot, InlineKeyboardMarkup
from telegram.error import BadRequest

from bots.render.card import VerdictCard
from bots.render.words import ENGLISH, Words

from .context import TelegramContext
from .render import NO_PREVIEW, card_html, card_keyboard

__all__ = ["UNEDITABLE", "card_buttons", "card_message", "edit_card", "uneditable"]

log = logging.getLogger(__name__)

#: what Telegram says (lower-cased) of a message the bot can no longer edit: deleted,
#: too old, or never its own
UNEDITABLE = ("message to edit not found", "message can't be edited", "message_id_invalid")


def uneditable(exc: BadRequest) -> bool:
    """Whether ``exc`` says the message can no longer be edited (:data:`UNEDITABLE`):
    whatever is to be shown goes in a new message instead."""
    said = exc.message.lower()
    return any(phrase in said for phrase in UNEDITABLE)


def card_buttons(
    ctx: TelegramContext, check_id: str, votes: tuple[int, int] = (0, 0), words: Words = ENGLISH
) -> InlineKeyboardMarkup:
    """The keyboard of check ``check_id``'s card, with ``votes``, a link to its report
    page when there is one and its Share button once the bot knows its username, in
    ``words``."""
    return card_keyboard(
        check_id,
        votes,
        report_url=ctx.report_url(check_id),
        share_url=ctx.share_url(check_id, words),
        words=words,
    )


def card_message(
    ctx: TelegramContext, card: VerdictCard, votes: tuple[int, int] = (0, 0)
) -> tuple[str, InlineKeyboardMarkup]:
    """The card's HTML and its keyboard (:func:`card_buttons`), in the card's words; an
    early card (``complete`` false: the debate still being written) has no buttons yet."""
    if not card.complete:
        return card_html(card), InlineKeyboardMarkup([])
    return card_html(card), card_buttons(ctx, card.check_id, votes, card.words)


async def edit_card(
    bot: Bot,
    chat_id: int,
    message_id: int,
    text: str,
    keyboard: InlineKeyboardMarkup | None,
    *,
    check_id: str,
    pass_over_gone: bool = True,
) -> None:
    """Edit message ``message_id`` of ``chat_id`` into ``text`` (Telegram HTML, shown
    with no link preview) and ``keyboard``, the card of check ``check_id`` (or its
    failure's sentence). Editing to what the message already shows is not an error: a
    retried job, or the same card again, may do it.

    Args:
        pass_over_gone: a message that cannot be edited (deleted, too old to edit) is
            logged and passed over: an old card, which a review or a correction may well
            find gone. ``False``: its ``BadRequest`` is raised (a deliver job, whose
            "checking…" message someone deleted, sends the card anew: :func:`uneditable`).

    Raises:
        TelegramError: any other failure (a chat the bot was removed from, a network
            error); and the ``BadRequest`` of a message gone, unless passed over.
    """
    try:
        await bot.edit_message_text(
            text,
            chat_id=chat_id,
            message_id=message_id,
            parse_mode="HTML",
            reply_markup=keyboard,
            link_preview_options=NO_PREVIEW,
        )
    except BadRequest as exc:
        if "not modified" in exc.message.lower():
            return
        if not pass_over_gone:
            raise
        log.info("card of check %s not edited: %s", check_id, exc.message)
