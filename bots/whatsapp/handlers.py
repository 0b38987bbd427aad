"""Each user message, routed: the window opened, then a command, a press, a question
about a card, or a post to check; anything else (a voice note, a sticker, a video, a
document) gets the one sentence the bots say for what they cannot check.

- ``/privacy``: what is stored, for how long, how to have it deleted (the bots' one
  privacy text, in the chat's language); ``/language <name>``: the chat's language
  (the card's words and the panel's); ``/help``: what the tipline does.
- A reply to one of the bot's cards asks about its check (a follow-up, as a reply to a
  card does on Telegram).
- A text, a link, a picture with or without its caption, or a voice note starts a check.

What the tipline says itself (the help, the privacy text, the language set or not
known) is said in the chat's language, as the cards are.

Each message's work runs in a task of its own (:meth:`~bots.chat.in_flight.InFlight.spawn`),
so the webhook answers Meta at once; a shutdown waits for it.
"""

from __future__ import annotations

import logging

from bots.chat.follow_ups import ask, named_answer
from bots.chat.setting_refusals import SettingRefused, parse_language
from bots.render.languages import LANGUAGE_KEY
from bots.render.privacy import privacy_text, retention_days_of
from bots.render.sentences import RESTARTING, UNSUPPORTED_INPUT
from bots.render.words import N_, words_for
from bots.service.records import FollowUp

from .buttons import on_press
from .check_flow import check_inbound
from .context import WhatsAppContext
from .inbound import Inbound
from .render import TEXT_LIMIT, plain
from .settings import PLATFORM

__all__ = ["HELP", "LANGUAGE_SET", "on_message"]

log = logging.getLogger(__name__)

HELP = N_(
    "Forward me a message, a link, a picture (with its caption) or a voice note and I "
    'check it: "checking…" comes at once, then the verdict with its sources. Its buttons '
    "show the panel's debate and the evidence; reply to a verdict to ask about it. "
    "/language <name> sets the language I answer in; /privacy says what is stored."
)
#: the reply to ``/language <name>``, in the language just set
LANGUAGE_SET = N_("Language: {name}.")


async def on_message(ctx: WhatsAppContext, inbound: Inbound) -> None:
    """Start the work of one new message (the webhook's ``on_message``); during a
    shutdown, say that the bot is restarting instead."""
    if ctx.work.spawn(_handle(ctx, inbound)):
        return
    log.info("a message in chat %s came during shutdown", ctx.log_chat(inbound.sender))
    try:
        await _say(ctx, inbound, words_for(await ctx.language(inbound.sender))(RESTARTING))
    except Exception:
        log.warning("could not say so in chat %s", ctx.log_chat(inbound.sender), exc_info=True)


async def _say(ctx: WhatsAppContext, inbound: Inbound, text: str) -> None:
    await ctx.outbox.text(inbound.sender, text, reply_to=inbound.id)


async def _handle(ctx: WhatsAppContext, inbound: Inbound) -> None:
    """One message, from its window to its answer; what fails is logged, never raised."""
    try:
        await ctx.outbox.window.opened(inbound.sender)
        await _route(ctx, inbound)
    except Exception:
        log.exception("a message in chat %s failed", ctx.log_chat(inbound.sender))


async def _route(ctx: WhatsAppContext, inbound: Inbound) -> None:
    if inbound.kind == "button":
        await on_press(ctx, inbound)
        return
    language = await ctx.language(inbound.sender)
    if inbound.kind not in ("text", "image", "audio"):
        await _say(ctx, inbound, words_for(language)(UNSUPPORTED_INPUT))
        return
    text = inbound.text.strip()
    if inbound.kind == "text" and text.startswith("/"):
        command, _, rest = text.partition(" ")
        if await _command(ctx, inbound, command.lower(), rest, language):
            return
    if inbound.reply_to and inbound.kind == "text":
        check_id = await ctx.card_check(inbound.sender, inbound.reply_to)
        if check_id is not None:
            await _follow_up(ctx, inbound, check_id, language)
            return
    await check_inbound(ctx, inbound, language)


async def _command(
    ctx: WhatsAppContext, inbound: Inbound, command: str, rest: str, language: str
) -> bool:
    """Answer a command, in the chat's ``language``; ``False`` for a text that only starts
    with "/" (checked)."""
    if command == "/privacy":
        days = retention_days_of(ctx.service.retention)
        await _say(ctx, inbound, privacy_text(days, words_for(language)))
    elif command == "/help":
        await _say(ctx, inbound, words_for(language)(HELP))
    elif command == "/language":
        await _set_language(ctx, inbound, rest, language)
    else:
        return False
    return True


async def _set_language(ctx: WhatsAppContext, inbound: Inbound, text: str, language: str) -> None:
    """``/language <name>``: the chat's language set and said in it, or one sentence, in
    the chat's current ``language``, naming those it can be."""
    try:
        name = parse_language(text)
    except SettingRefused as exc:
        await _say(ctx, inbound, exc.said(words_for(language)))
        return
    await ctx.service.chats.set_settings(PLATFORM, inbound.sender, {LANGUAGE_KEY: name})
    await _say(ctx, inbound, words_for(name)(LANGUAGE_SET, name=name or "English"))


async def _follow_up(ctx: WhatsAppContext, inbound: Inbound, check_id: str, language: str) -> None:
    """A question about a card: the answer with its sources named, or one sentence."""
    requester = ctx.requester(inbound.sender)
    got = await ask(ctx.service, check_id, inbound.text.strip(), requester, language=language)
    text = plain(named_answer(got)) if isinstance(got, FollowUp) else got.text
    await _say(ctx, inbound, text[:TEXT_LIMIT])
