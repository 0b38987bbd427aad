"""The card's reply buttons pressed: Debate and Evidence answer with that section of
the report; Review offers a reviewer the verdicts (a list message), and their choice is
saved as a review (:func:`bots.chat.reviews.save_review`).

Each button's id carries its state (``zf:debate:<check id>``,
``zf:rv:<choice>:<check id>``), and the report is read from the store when it is
pressed, so buttons keep working after a restart. A check that was not asked in the
presser's own chat is "not found". What the buttons say themselves ("not found", who may
review) is said in the chat's language. A press is a message from the user: it is answered
inside their window. Who may review on WhatsApp: a reviewer named in ``[service]
reviewers`` (``"whatsapp:<wa_id>"``); a WhatsApp chat is a user's own, with no
moderators, so nobody else.
"""

from __future__ import annotations

import logging
import re

from bots.chat.reviews import CHOICES, choice_label, choose_sentence, save_review
from bots.render.sections import section
from bots.render.sentences import review_refusal
from bots.render.words import N_, Words, words_for
from bots.service.records import CheckNotFoundError, CheckRow, ReviewRequest
from bots.service.refusals import ReviewRefused
from zofia_engine.report import Report

from .context import WhatsAppContext
from .inbound import Inbound
from .render import BUTTON_TITLE_LIMIT, parse_button_id, section_messages
from .settings import PLATFORM

__all__ = ["NOT_FOUND", "REFUSED", "on_press"]

log = logging.getLogger(__name__)

NOT_FOUND = N_("That check was not found.")
REFUSED = N_("Only a reviewer named in the bot's settings can review a verdict on WhatsApp.")
#: a list row's title and a section's, at most (the API refuses longer)
ROW_TITLE_LIMIT = 24
_CHOICE = re.compile(
    r"zf:rv:(?P<choice>" + "|".join(CHOICES) + r"):(?P<check_id>[A-Za-z0-9_-]{1,64})"
)


async def on_press(ctx: WhatsAppContext, inbound: Inbound) -> None:
    """Answer a pressed button or a chosen row; one not of the bot's is left alone."""
    chosen = _CHOICE.fullmatch(inbound.button)
    if chosen is not None:
        await _save(ctx, inbound, chosen["check_id"], chosen["choice"])
        return
    found = parse_button_id(inbound.button)
    if found is None:
        log.info("a press of an unknown button in chat %s", ctx.log_chat(inbound.sender))
        return
    kind, check_id = found
    if kind == "review":
        await _offer_review(ctx, inbound, check_id)
    else:
        await _section(ctx, inbound, check_id, kind)


async def _reply(ctx: WhatsAppContext, inbound: Inbound, text: str) -> None:
    await ctx.outbox.text(inbound.sender, text, reply_to=inbound.id)


async def _say(ctx: WhatsAppContext, inbound: Inbound, sentence: str) -> None:
    """One of the buttons' own sentences, in the chat's language."""
    await _reply(ctx, inbound, words_for(await ctx.language(inbound.sender))(sentence))


async def _section(ctx: WhatsAppContext, inbound: Inbound, check_id: str, kind: str) -> None:
    found = await ctx.service.chats.stored(check_id, PLATFORM, inbound.sender)
    if found is None or found[1] is None:
        await _say(ctx, inbound, NOT_FOUND)
        return
    part = section(kind, found[1], words_for(found[0].language))
    for n, text in enumerate(section_messages(part)):
        await ctx.outbox.text(inbound.sender, text, reply_to=inbound.id if n == 0 else "")


def _may_review(ctx: WhatsAppContext, wa_id: str) -> bool:
    return ctx.service.reviewers.named(PLATFORM, wa_id)


def _row_title(text: str) -> str:
    return text if len(text) <= ROW_TITLE_LIMIT else text[: ROW_TITLE_LIMIT - 1] + "…"


async def _reviewable(
    ctx: WhatsAppContext, inbound: Inbound, check_id: str
) -> tuple[CheckRow, Report] | None:
    """The check a reviewer asks to review and its report; ``None``, and the sender told
    why in one sentence, when they may not review or there is no such report here."""
    if not _may_review(ctx, inbound.sender):
        await _say(ctx, inbound, REFUSED)
        return None
    found = await ctx.service.chats.stored(check_id, PLATFORM, inbound.sender)
    if found is None or found[1] is None:
        await _say(ctx, inbound, NOT_FOUND)
        return None
    return found[0], found[1]


async def _offer_review(ctx: WhatsAppContext, inbound: Inbound, check_id: str) -> None:
    """The reviewer's choices, as a list message (five rows: Confirm and the verdicts)."""
    found = await _reviewable(ctx, inbound, check_id)
    if found is None:
        return
    words = words_for(found[0].language)
    rows = [
        {"id": f"zf:rv:{choice}:{check_id}", "title": _row_title(choice_label(choice, words))}
        for choice in CHOICES
    ]
    button = words("Review")[:BUTTON_TITLE_LIMIT]
    body = {
        "type": "list",
        "body": {"text": choose_sentence(found[1].verdict, words)},
        "action": {"button": button, "sections": [{"title": _row_title(button), "rows": rows}]},
    }
    await ctx.outbox.send(inbound.sender, "interactive", body, reply_to=inbound.id)


async def _save(ctx: WhatsAppContext, inbound: Inbound, check_id: str, choice: str) -> None:
    """Save the reviewer's choice; every chat shown the card hears of a change (the
    service's corrections), and the reviewer gets the one sentence saying so."""
    found = await _reviewable(ctx, inbound, check_id)
    if found is None:
        return
    words: Words = words_for(found[0].language)
    request = ReviewRequest(check_id, ctx.requester(inbound.sender), choice)
    try:
        said = await save_review(ctx.service, request, found[1].verdict, words)
    except ReviewRefused as exc:
        said = review_refusal(exc, words)
    except CheckNotFoundError:
        said = words(NOT_FOUND)
    await _reply(ctx, inbound, said)
