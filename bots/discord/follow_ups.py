"""Follow-up questions on Discord: a reply to one of the bot's verdict cards asks about
that check, as on Telegram (:mod:`bots.telegram.follow_ups`).

In a DM with the bot any reply to a card is a question ("why?", "which source?"); in a
server, a reply to a card that mentions the bot in its text (``@ZoFia which source?``:
the bot's user, or its own role, which Discord's autocomplete sometimes picks). A
reply's default ping does not count: it is no request, and a question counts against
the asker's limits. Without the Message Content intent Discord still gives the bot the
text of both (a DM, a message that mentions it), so the client asks only for the
unprivileged message intents.

The card's buttons carry its check id (custom ids ``zf:<kind>:<check id>``,
:class:`~.buttons.CheckButton`); the question goes to
:meth:`~bots.service.checks.CheckService.follow_up` through :func:`bots.chat.follow_ups.ask`,
and the answer (or the one sentence saying why there is none) comes back as a reply to
the question: plain markdown, everything escaped, the cited sources named and listed as
links, under 2,000 characters, mentions disabled and no link previews. A burst of
refused questions gets one refusal, and in a server a fixed sentence (how to ask, a
check with no report) is said at most once per the server's cooldown.
"""

from __future__ import annotations

import contextlib
import logging

import discord

from bots.chat.follow_ups import ASK_HOW, ASKING, Said, ask, named_answer, question_text, say_now
from bots.render.sentences import RESTARTING, source_label
from bots.render.words import ENGLISH
from bots.service.records import FollowUp, Requester
from zofia_engine.report import EvidenceItem

from .buttons import CheckButton
from .chats import PLATFORM
from .context import DiscordContext
from .guild_settings import guild_settings
from .render import MESSAGE_LIMIT, NONE, escape, safe_url, shorten

__all__ = ["card_check_id", "follow_up_message", "on_follow_up"]

log = logging.getLogger(__name__)

#: a card's button: one :class:`~.buttons.CheckButton` answers (its custom id names the check)
_CARD_BUTTON = CheckButton.__discord_ui_compiled_template__
_MAX_ANSWER = 1200  # escaped; the engine's answer is a few sentences (80 words at most)
_MAX_SOURCE = 200
_MAX_URL = 500


def card_check_id(message: discord.Message | None, bot_id: int) -> str | None:
    """The check id of ``message`` when it is one of the bot's verdict cards (its
    buttons' custom ids name it), else ``None``."""
    if message is None or message.author.id != bot_id:
        return None
    for row in message.components:
        for child in getattr(row, "children", ()):
            found = _CARD_BUTTON.fullmatch(getattr(child, "custom_id", None) or "")
            if found is not None:
                return found["check_id"]
    return None


def _guild_id(message: discord.Message) -> int | None:
    """The server a message is in; ``None`` in a DM (a server not cached yet is known by
    its channel)."""
    if message.guild is not None:
        return message.guild.id
    guild_id: int | None = getattr(message.channel, "guild_id", None)
    return guild_id


def _mentions(message: discord.Message, bot_id: int) -> list[str]:
    """How the bot is mentioned in a message's text: its user, or its managed role."""
    forms = [f"<@{bot_id}>", f"<@!{bot_id}>"]
    role = message.guild.self_role if message.guild is not None else None
    if role is not None:
        forms.append(role.mention)
    return forms


async def _replied_to(message: discord.Message) -> discord.Message | None:
    """The message ``message`` replies to: as Discord sent it with the reply, else from
    the cache or fetched; ``None`` when it is gone."""
    reference = message.reference
    if reference is None or reference.message_id is None:
        return None
    if isinstance(reference.resolved, discord.Message):
        return reference.resolved
    if reference.resolved is not None:  # deleted
        return None
    if reference.cached_message is not None:
        return reference.cached_message
    try:
        return await message.channel.fetch_message(reference.message_id)
    except discord.HTTPException:
        return None


def _source_line(item: EvidenceItem) -> str:
    """A cited source as the card lists its links: ``• [title (site)](url)``."""
    shown = shorten(source_label(item), _MAX_SOURCE)
    url = safe_url(item.url)
    return f"• [{shown}]({url})" if url and len(url) < _MAX_URL else f"• {shown}"


def follow_up_message(followed: FollowUp) -> str:
    """The answer as one Discord message: its sentences (escaped), then the sources it
    cites, linked, as many as fit 2,000 characters; the fixed sentence alone when the
    report does not answer."""
    if not followed.answered:
        return escape(followed.text)
    lines = [shorten(named_answer(followed), _MAX_ANSWER)]
    if followed.sources:
        lines += ["", "**Sources**"]
        size = len("\n".join(lines))
        for item in followed.sources:
            line = _source_line(item)
            if size + 1 + len(line) > MESSAGE_LIMIT:
                break
            lines.append(line)
            size += 1 + len(line)
    return "\n".join(lines)


async def _reply(ctx: DiscordContext, message: discord.Message, content: str) -> None:
    """``content`` as a reply to ``message``: no ping (not even the asker), no preview,
    sent without the reply when the question was deleted meanwhile."""
    try:
        await message.channel.send(
            content,
            reference=message.to_reference(fail_if_not_exists=False),
            allowed_mentions=NONE,
            suppress_embeds=True,
        )
    except discord.HTTPException as exc:
        where = ctx.log_chat(_chat(message))  # its keyed hash, never its id
        log.warning("could not answer a follow-up in chat %s: %s", where, exc.text)


def _chat(message: discord.Message) -> str:
    """The chat a message's limits and settings are kept for: its server, or its DM."""
    guild_id = _guild_id(message)
    return str(guild_id) if guild_id is not None else f"dm-{message.channel.id}"


async def _said_now(ctx: DiscordContext, message: discord.Message, said: Said) -> bool:
    """Whether ``said`` is said to ``message`` now (:func:`~bots.chat.follow_ups.say_now`:
    one refusal for a user's burst, a server's fixed sentences once per its cooldown)."""
    chat = _chat(message)
    cooldown_s = None
    if said.kind == "fixed" and _guild_id(message) is not None:
        cooldown_s = (await guild_settings(ctx.service, chat, ctx.settings)).cooldown_s
    now = say_now(
        ctx.cooldowns, said, chat=chat, user=str(message.author.id), group_cooldown_s=cooldown_s
    )
    if not now:
        log.info("follow-up in chat %s: %s sentence left unsaid", ctx.log_chat(chat), said.kind)
    return now


async def _language(ctx: DiscordContext, chat: str, check_id: str) -> str:
    """The chat's language; where it never set one, the check's (a message carries no
    locale: the check's is its asker's, or the server's when it was asked)."""
    setting = await ctx.language_setting(chat)
    if setting is not None:
        return setting
    row = await ctx.service.chats.check(check_id, PLATFORM, chat)
    return row.language if row is not None else ""


async def _ask_how(ctx: DiscordContext, message: discord.Message, check_id: str) -> str:
    """How to ask, in :func:`_language` (English when it cannot be read: a courtesy)."""
    chat = _chat(message)
    words = await ctx.courtesy_words(chat, _language(ctx, chat, check_id))
    return words(ASK_HOW)


async def _answer(
    ctx: DiscordContext, message: discord.Message, check_id: str, question: str
) -> None:
    """Ask the service, and reply with the answer or one sentence saying why not (unless
    that sentence was said moments ago, :func:`_said_now`)."""
    chat = _chat(message)
    requester = Requester(PLATFORM, str(message.author.id), chat, _guild_id(message) is None)
    with contextlib.suppress(discord.HTTPException):  # a courtesy while the model answers
        await message.channel.typing()

    got = await ask(
        ctx.service, check_id, question, requester, language=_language(ctx, chat, check_id)
    )
    if isinstance(got, FollowUp):
        await _reply(ctx, message, follow_up_message(got))
    elif await _said_now(ctx, message, got):
        await _reply(ctx, message, escape(got.text))


async def on_follow_up(ctx: DiscordContext, bot_id: int, message: discord.Message) -> None:
    """A new message: when it is a question about one of the bot's cards, answer it (one
    reply); anything else is left alone."""
    reference = message.reference
    if message.author.bot or reference is None or reference.message_id is None:
        return
    if reference.type is not discord.MessageReferenceType.reply:  # a forward
        return
    mentions = _mentions(message, bot_id)
    in_dm = _guild_id(message) is None
    if not in_dm and not any(mention in message.content for mention in mentions):
        return
    check_id = card_check_id(await _replied_to(message), bot_id)
    if check_id is None:
        return
    question = question_text(message.content, mentions)
    if not question:
        if await _said_now(ctx, message, ASKING):
            await _reply(ctx, message, escape(await _ask_how(ctx, message, check_id)))
        return
    with ctx.work.hold() as taken:  # a shutdown waits for the answer, or turns it away
        if not taken:
            await _reply(ctx, message, escape(ENGLISH(RESTARTING)))
            return
        await _answer(ctx, message, check_id, question)
