"""A changed verdict told to a WhatsApp user, and a deliver job's card.

:func:`send_correction` is the WhatsApp sender of :mod:`bots.chat.corrections`. A
WhatsApp message cannot be edited, so a chat is told in new messages: inside the user's
24-hour window, the update's one sentence and then the card as it now reads (with its
buttons); outside it, only ``[whatsapp] correction_template`` (the sentence and where to
read the check), or nothing when no template is named. A user who can never be reached
(WhatsApp says the number is not on WhatsApp) raises
:class:`~bots.service.records.ChatGoneError`: the chat is given up at once.

:func:`post_delivered` posts a queued check's card where its target says (see
:func:`~.check_flow.delivery_target`), through the same window rule
(:func:`~.cards.send_card`: outside it, ``card_template``).
"""

from __future__ import annotations

import logging

from bots.chat.check_flow import card_for, failure_for
from bots.chat.corrections import Notice
from bots.service.records import CardState, ChatGoneError, Claim, Failed

from .cards import check_reference, send_card
from .cloud import GraphError
from .context import WhatsAppContext
from .window import Template

__all__ = ["NOT_ON_WHATSAPP", "post_delivered", "send_correction"]

log = logging.getLogger(__name__)

#: Graph's codes for a recipient who can never get a message (not a WhatsApp user)
NOT_ON_WHATSAPP = (131030, 1013)


async def send_correction(ctx: WhatsAppContext, notice: Notice) -> None:
    """Tell the chat of ``notice`` (see the module's docstring).

    Raises:
        ChatGoneError: the user can never be reached.
        GraphError: a failure worth trying again.
    """
    if not notice.cards:
        return
    to = notice.chat
    card = notice.cards[-1][1]  # the newest card, as it now reads
    template = Template(
        ctx.settings.correction_template,
        (notice.sentence, check_reference(ctx, card)),
        card.words.tag,
    )
    try:
        if not await ctx.outbox.window.is_open(to):
            sent = await ctx.outbox.text(to, notice.sentence, template=template)
            log.info(
                "correction of check %s outside the window in chat %s: %s",
                card.check_id,
                ctx.log_chat(to),
                "template sent" if sent else "nothing sent (no template)",
            )
            return
        await ctx.outbox.text(to, notice.sentence, template=template)
        await send_card(ctx, to, card)
    except GraphError as exc:
        if exc.code in NOT_ON_WHATSAPP:
            raise ChatGoneError(str(exc)) from exc
        raise


async def post_delivered(ctx: WhatsAppContext, claim: Claim, found: CardState) -> None:
    """Post a deliver job's card (or its failure's sentence) where ``claim`` says."""
    target = claim.target
    to, reply_to = str(target.get("to") or ""), str(target.get("reply_to") or "")
    if not to:
        log.warning("deliver job of check %s has no recipient", claim.check_id)
        return
    outcome = found.outcome
    if isinstance(outcome, Failed):
        sentence = failure_for(outcome, target)
        await ctx.outbox.text(to, sentence, reply_to=reply_to)
        return
    await send_card(ctx, to, card_for(outcome, target), reply_to=reply_to)
