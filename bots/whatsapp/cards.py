"""A verdict card sent to a WhatsApp user, live, from a deliver job, or as a correction.

WhatsApp cannot edit a message: the card is always a new one. It goes as one
interactive message with its reply buttons (Debate, Evidence, Review) when it fits an
interactive body (1,024 characters), else as a text (4,096) followed by a short message
that carries the buttons. An early card (the verdict the evidence fixed, the debate
still being written) has no buttons; the completed card follows as a second message.
Outside the user's 24-hour window the card cannot be sent at all: ``[whatsapp]
card_template`` says the verdict and where to read it instead, or nothing is sent.

Where each card went is recorded for corrections (the chat sealed at rest, no message
id: nothing is ever edited), and its message ids, as keyed hashes, for replies that ask
about it.
"""

from __future__ import annotations

import logging

from bots.render.card import VerdictCard
from bots.service.records import CardPlace

from .context import WhatsAppContext
from .render import BODY_LIMIT, card_buttons, card_text, plain
from .settings import PLATFORM
from .window import Template

__all__ = ["check_reference", "send_card"]

log = logging.getLogger(__name__)


def check_reference(ctx: WhatsAppContext, card: VerdictCard) -> str:
    """How a template names a check: its report page, else its id."""
    return ctx.report_url(card.check_id) or card.words("Check {check_id}", check_id=card.check_id)


async def send_card(ctx: WhatsAppContext, to: str, card: VerdictCard, *, reply_to: str = "") -> str:
    """Send ``card`` to ``to`` (see the module's docstring); the id of the message that
    carries its buttons (or of the card), ``""`` when nothing could be sent."""
    words = card.words
    headline = f"{card.icon} {plain(card.headline)}"
    late = Template(ctx.settings.card_template, (headline, check_reference(ctx, card)), words.tag)
    text = card_text(card, report_url=ctx.report_url(card.check_id))
    buttons = card_buttons(card)
    outbox = ctx.outbox
    if buttons and len(text) <= BODY_LIMIT:
        sent = await outbox.buttons(to, text, buttons, reply_to=reply_to, template=late)
        shown = [sent]
    else:
        sent = await outbox.text(to, text, reply_to=reply_to, template=late)
        shown = [sent]
        if sent and buttons and await outbox.window.is_open(to):
            more = f"{card.icon} {words('Check {check_id}', check_id=card.check_id)}"
            shown.append(await outbox.buttons(to, more, buttons))
    if not sent:
        log.info("card of check %s not sent: outside the window", card.check_id)
        return ""
    await ctx.service.record_card(card.check_id, CardPlace(PLATFORM, to, "", card.verdict))
    for message_id in filter(None, shown):
        await ctx.card_sent(to, message_id, card.check_id)
    return shown[-1] or sent
