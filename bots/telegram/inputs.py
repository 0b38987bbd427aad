"""What starts a check: a message in a private chat, ``/check``, a mention of the bot in a
reply, and (when a group's admin turned it on) a post forwarded into a group.

Each may be text, a Telegram photo or an image file, a voice message or an audio file (with
or without a caption), or an album: its messages are gathered for ``album_wait_s`` and
checked as one post.

Each handler only decides what to check and for whom; :func:`~.check_flow.check_message`
does the rest, in the background, so that updates keep flowing while checks run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from telegram import Message, MessageEntity, Update
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import BaseHandler, CommandHandler, ContextTypes, MessageHandler, filters

from bots.render.sentences import (
    RESTARTING,
    UNSUPPORTED_INPUT,
    cooldown_reason,
    cooldown_sentence,
)
from bots.render.words import N_, Words, words_for

from .check_flow import AUTO_CHECK, Asked, ChatRules, chat_rules, check_message
from .context import (
    TelegramContext,
    chat_language_of,
    context_of,
    read_chat_language,
)
from .images import IMAGE_DOCUMENT, album_caption, has_image
from .posts import NOTHING_TO_CHECK, post_text, visible_text
from .voice import AUDIO_DOCUMENT, voice_of

__all__ = [
    "AUTO_CHECK",
    "HOW_TO",
    "asker_of",
    "chat_words",
    "cooldown_left",
    "cooldown_refusal",
    "images_of",
    "input_handlers",
    "replied_to",
    "restarting",
]

#: what a request with nothing to check gets (said with ``words(HOW_TO)``)
HOW_TO = N_(
    "Reply to a post with /check (or mention me in the reply) and I will check it; "
    "/check followed by text checks that text."
)

log = logging.getLogger(__name__)


async def chat_words(ctx: TelegramContext, message: Message) -> Words:
    """The words of the chat ``message`` is in (:func:`~.context.chat_language_of`). A
    store that cannot be read gets English: these are courtesy sentences."""
    return await ctx.courtesy_words(message.chat_id, read_chat_language(ctx, message))


async def _say(ctx: TelegramContext, message: Message, sentence: str) -> None:
    """One of the fixed sentences (:data:`HOW_TO` …) in reply to ``message``, in its
    chat's words."""
    words = await chat_words(ctx, message)
    await message.reply_text(words(sentence), do_quote=True)


def restarting(message: Message) -> str:
    """What a request that comes during shutdown is told
    (:data:`~bots.render.sentences.RESTARTING`), in the language of the sender's app: a
    bot shutting down reads no store."""
    return words_for(chat_language_of(message, None))(RESTARTING)


def asker_of(message: Message) -> int:
    """Who asked: the chat posting as itself when there is one (an anonymous admin, a
    channel, a linked channel's auto-forward: Telegram then names a shared service
    account as the user, one for every such chat), else the user."""
    if message.sender_chat is not None:
        return message.sender_chat.id
    if message.from_user is not None:
        return message.from_user.id
    return message.chat_id


def replied_to(message: Message) -> Message | None:
    """The message replied to; not the topic opener that every forum message points at."""
    target = message.reply_to_message
    if target is None or target.forum_topic_created is not None:
        return None
    return target


def images_of(message: Message) -> list[Message]:
    """The images of ``message`` to check: itself when it has one."""
    return [message] if has_image(message) else []


def has_media(message: Message) -> bool:
    """Whether ``message`` carries an image or a voice note, checked even without text."""
    return has_image(message) or voice_of(message) is not None


async def _start(ctx: TelegramContext, request: Message, target: Message, text: str) -> None:
    images, voice = images_of(target), voice_of(target)
    asked = Asked(target, text, asker_of(request), request, images=images, voice=voice)
    work = check_message(ctx, asked)
    if not ctx.work.spawn(work):
        await request.reply_text(restarting(request), do_quote=True)  # shutdown has begun


async def _album(ctx: TelegramContext, opener: Message, *, unasked: bool = False) -> None:
    """Gather the album ``opener`` opened, then check it as one post, answered in a reply
    to its first message."""
    try:
        messages = await ctx.albums.gather(opener, ctx.settings.album_wait_s)
    except asyncio.CancelledError:  # shutdown while gathering: nothing was submitted
        if not unasked:
            with contextlib.suppress(TelegramError):
                await opener.reply_text(restarting(opener), do_quote=True)
        raise
    first = messages[0]
    images = [m for m in messages if has_image(m)]
    voice = next((v for m in messages if (v := voice_of(m)) is not None), None)
    text = album_caption(messages)
    try:  # an unasked album's rules: read once, for its check too
        rules = await _auto_check(ctx, first) if unasked else None
        if unasked and rules is None:
            return
    except Exception:  # a store that cannot be read: no auto-check, as when it is off
        where = ctx.log_chat(first.chat_id)
        log.exception("could not read the auto-check setting of chat %s", where)
        return
    try:
        if not text and not images and voice is None:
            if not unasked:
                await _say(ctx, first, NOTHING_TO_CHECK)
            return
        if await _in_cooldown(ctx, first, say=not unasked):
            return
    except TelegramError as exc:
        log.warning("could not answer an album in chat %s: %s", ctx.log_chat(first.chat_id), exc)
        return
    asked = Asked(first, text, asker_of(first), images=images, unasked=unasked, voice=voice)
    await check_message(ctx, asked, rules=rules)


async def _in_album(
    ctx: TelegramContext,
    message: Message,
    gathering: Callable[[], Coroutine[Any, Any, None]],
    *,
    asked: bool = False,
) -> bool:
    """Whether ``message`` is an album's: it joined one being gathered (its check is under
    way), or it opened one, whose ``gathering`` starts now. During shutdown nothing is
    gathered, and the sender of an ``asked`` album is told."""
    if message.media_group_id is None:
        return False
    if ctx.albums.add(message) and not ctx.work.spawn(gathering()):
        ctx.albums.discard(message)
        if asked:
            await message.reply_text(restarting(message), do_quote=True)
    return True


def cooldown_left(ctx: TelegramContext, message: Message, *, asked: str = "request") -> float:
    """Groups get one check every ``chat_cooldown_s``; private chats only the service
    limits. The seconds left of the cooldown of the chat of ``message`` (``0``: a check
    may start, and the cooldown is claimed for it); a refusal is logged, as an
    ``asked`` ("request", "guest request") refused."""
    if message.chat.type == ChatType.PRIVATE:
        return 0.0
    left, _ = ctx.cooldowns.claim(str(message.chat_id), ctx.settings.chat_cooldown_s)
    if left:
        where = ctx.log_chat(message.chat_id)
        log.info("%s in chat %s refused: cooldown, %.0f s left", asked, where, left)
    return left


async def cooldown_refusal(
    ctx: TelegramContext, message: Message, left: float
) -> tuple[str, Words]:
    """The cooldown's refusal of ``message``, ``left`` seconds before the next check:
    its sentence, and the chat's words it is said in (:func:`chat_words`)."""
    words = await chat_words(ctx, message)
    return cooldown_sentence(left, words=words), words


async def _in_cooldown(ctx: TelegramContext, message: Message, *, say: bool = True) -> bool:
    """Whether a request is inside its chat's cooldown (:func:`cooldown_left`); it is
    told how long is left (a burst's refusals once, see :class:`~.refusals.Refusals`),
    in the background."""
    left = cooldown_left(ctx, message)
    if left and say:
        ctx.work.spawn(_refuse_in_cooldown(ctx, message, left))
    return bool(left)


async def _refuse_in_cooldown(ctx: TelegramContext, message: Message, left: float) -> None:
    sentence, words = await cooldown_refusal(ctx, message, left)
    await ctx.refusals.refuse(message, sentence, left, words, reason=cooldown_reason(words=words))


async def _check(ctx: TelegramContext, request: Message, target: Message, text: str) -> None:
    """Check ``text`` of ``target`` (which may be only blank characters: nothing to
    check, said before the group's cooldown is claimed)."""
    if not text and not has_media(target):
        await _say(ctx, request, NOTHING_TO_CHECK)
        return
    if await _in_cooldown(ctx, request):
        return
    await _start(ctx, request, target, text)


async def on_private_message(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A private chat: anything sent or forwarded is checked; an album once."""
    message = update.effective_message
    if message is None:
        return
    ctx = context_of(context)
    if await _in_album(ctx, message, partial(_album, ctx, message), asked=True):
        return
    await _check(ctx, message, message, post_text(message))


async def on_check_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/check`` in reply to a post checks the post; ``/check TEXT`` checks TEXT."""
    message = update.effective_message
    if message is None or message.text is None:
        return
    target = replied_to(message)
    if target is not None:
        await _check(context_of(context), message, target, post_text(target))
        return
    command = message.parse_entities([MessageEntity.BOT_COMMAND])
    length = next(iter(command)).length if command else 0
    text = visible_text(message.text[length:])
    if not text:
        await _say(context_of(context), message, HOW_TO)
        return
    await _check(context_of(context), message, message, text)


async def on_mention(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A reply that mentions the bot checks the message it replies to."""
    message = update.effective_message
    if message is None:
        return
    me = f"@{context.bot.username}".lower()
    mentions = message.parse_entities([MessageEntity.MENTION]).values()
    if me not in (mention.lower() for mention in mentions):
        return
    target = replied_to(message)
    if target is None:  # "@bot hello": what the bot does in a group
        await _say(context_of(context), message, HOW_TO)
        return
    await _check(context_of(context), message, target, post_text(target))


async def on_unsupported(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A sticker, a video or a file in a private chat: one sentence saying what the bot
    can check."""
    message = update.effective_message
    if message is None:
        return
    ctx = context_of(context)
    if await _in_album(ctx, message, partial(_unsupported_album, ctx, message)):
        return  # an album of videos: answered once
    await _say(ctx, message, UNSUPPORTED_INPUT)


async def _unsupported_album(ctx: TelegramContext, opener: Message) -> None:
    await ctx.albums.gather(opener, ctx.settings.album_wait_s)
    await _say(ctx, opener, UNSUPPORTED_INPUT)


async def _auto_check(ctx: TelegramContext, message: Message) -> ChatRules | None:
    """The rules of the message's group for its unasked check, read once for it (its
    check is given them), when an admin turned auto-check on there; else ``None``."""
    rules = await chat_rules(ctx, message, unasked=True)
    return rules if rules.auto_check else None


async def on_group_forward(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A post forwarded into a group: checked only if an admin turned auto-check on (an
    album's switch is read once it is gathered: its messages join it before any await)."""
    message = update.effective_message
    if message is None:
        return
    ctx = context_of(context)
    # unasked: during shutdown it is simply not checked
    if await _in_album(ctx, message, partial(_album, ctx, message, unasked=True)):
        return
    rules = await _auto_check(ctx, message)
    if rules is None:
        return
    text = post_text(message)
    if (text or has_media(message)) and not await _in_cooldown(ctx, message, say=False):
        asked = Asked(
            message, text, asker_of(message), message, images_of(message), True, voice_of(message)
        )
        ctx.work.spawn(check_message(ctx, asked, rules=rules))


#: what a private chat may send that the bot cannot read (nor a caption to check)
_UNSUPPORTED = (
    filters.Sticker.ALL
    | filters.VIDEO
    | filters.VIDEO_NOTE
    | filters.ANIMATION
    | filters.Document.ALL
    | filters.CONTACT
    | filters.LOCATION
    | filters.POLL
)


def input_handlers() -> list[BaseHandler[Update, Any, Any]]:
    """The handlers, in the order they are tried."""
    private = filters.ChatType.PRIVATE
    groups = filters.ChatType.GROUPS
    media = filters.PHOTO | IMAGE_DOCUMENT | filters.VOICE | filters.AUDIO | AUDIO_DOCUMENT
    return [
        CommandHandler("check", on_check_command),
        MessageHandler(
            private & ~filters.COMMAND & (filters.TEXT | filters.CAPTION | media),
            on_private_message,
        ),
        MessageHandler(private & ~filters.COMMAND & _UNSUPPORTED, on_unsupported),
        MessageHandler(
            groups & filters.Entity(MessageEntity.MENTION) & ~filters.COMMAND & ~filters.FORWARDED,
            on_mention,
        ),
        MessageHandler(
            groups & filters.FORWARDED & (filters.TEXT | filters.CAPTION | media),
            on_group_forward,
        ),
    ]
