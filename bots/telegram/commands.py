"""``/start``, ``/help``, ``/privacy`` and ``/settings``: what the bot does (with a
worked example: :mod:`.first_run`), what it stores, and the per-group auto-check switch
(and how sure an auto-check must be to reply with a card) that only a chat admin may
turn. ``/start c_<token>`` opens a shared card (:mod:`.shared`)."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from telegram import BotCommand, Update
from telegram.constants import ChatType
from telegram.ext import BaseHandler, CommandHandler, ContextTypes

from bots.chat.quiet import (
    DEFAULT_MIN_CONFIDENCE,
    QUIET_MIN_CONFIDENCE,
    min_confidence_of,
    parse_min_confidence,
)
from bots.chat.setting_refusals import SettingRefused, parse_language
from bots.render.languages import (
    ENGLISH_NAME,
    LANGUAGE_KEY,
    languages_matching,
    own_name,
)
from bots.render.privacy import privacy_text, retention_days_of
from bots.render.sentences import listed
from bots.render.words import (
    ENGLISH,
    N_,
    Words,
    language_named,
    translated_languages,
    words_for,
)

from .context import PLATFORM, chat_language_of, context_of
from .deliveries import REACTION
from .first_run import show_example
from .inputs import AUTO_CHECK, chat_words
from .share_links import SHARE_PREFIX
from .shared import open_shared

__all__ = ["BOT_COMMANDS", "HELP", "START", "bot_commands", "command_handlers"]

HELP = N_(
    "<b>ZoFia checks whether a post is true, false, misleading or unproven.</b>\n\n"
    "<b>In this chat</b>: forward me a post, or send its text, a link, or an image or "
    "screenshot of it (an album is one post); /check TEXT works too.\n"
    "<b>In a group</b>: reply to a post with /check, or mention me in the reply. An admin can "
    "make me check every forwarded post with /settings autocheck on; I then reply only to "
    "a false or misleading post or a scam, and mark the others with a 👀 reaction.\n\n"
    '<b>What you get</b>: a "Checking…" message at once, showing each step as it finishes, '
    "then the verdict card in its place, in about a minute on the built-in model (a few "
    "minutes when the evidence settles the post and the whole panel debates it). The verdict "
    "is one of:\n"
    "✅ <b>True</b>: the evidence found supports the post.\n"
    "❌ <b>False</b>: the evidence contradicts it.\n"
    "⚠️ <b>Misleading</b>: right in its facts, but missing context that changes what a "
    "reader would conclude.\n"
    "❔ <b>Unproven</b>: nothing found settles it either way; the card says which way the "
    "panel leaned and what would settle it.\n"
    "A post with no fact to check, satire or a scam is named as such. The card also shows "
    "how sure the judge was, a summary and the strongest sources. Its buttons open the "
    "debate, the evidence and the claims, and let you say whether the verdict was right.\n\n"
    "<b>What is stored</b>: /privacy says what is kept, for how long, and how to have it "
    "deleted."
)

#: ``/start``: three lines, what the bot does, what comes when, and that an AI answers
START = N_(
    "I check whether a post is true, false, misleading or unproven, from the sources I find.\n"
    "Forward me a post, or send its text, a link or a screenshot (in a group, reply to it "
    'with /check): "Checking…" comes at once, then the verdict card in its place.\n'
    "My answers come from an AI that can be wrong: read the sources before you share. "
    "/help says more; /privacy, what is stored."
)

#: a group's auto-check switch, as ``/settings`` shows it
AUTO_CHECK_ON = N_("Auto-check of forwarded posts is <b>on</b> in this chat.")
AUTO_CHECK_OFF = N_("Auto-check of forwarded posts is <b>off</b> in this chat.")
SETTINGS_HELP = N_(
    "An admin can change it with /settings autocheck on (or off).\n"
    "Auto-check replies with a card only to a false or misleading post or a scam "
    "it is at least <b>{confidence}</b> sure of (or one a moderator reviewed); "
    "other posts get a {reaction} reaction. An admin can change it with "
    "/settings confidence {example} (default {default}).\n"
)
LANGUAGE_HELP = N_(
    "The panel writes its summary and debate in <b>{language}</b> here{why}; "
    "change it with /settings language NAME (English resets it; /settings language "
    "alone lists them). The card's own words follow it in {translated}, else they are "
    "English."
)
#: ``/settings language`` alone: every language a chat can pick
LANGUAGE_LIST = N_(
    "<b>The card's words and the panel</b>: {worded}.\n"
    "<b>The panel only</b> (the card's words are then English): {others}.\n"
    "Set one with /settings language NAME, by its English name or its own "
    "(/settings language {example}); English resets it."
)
#: a group member who is not an admin asking to change a setting
ADMINS_ONLY = N_("Only a chat admin can change the settings.")
#: why a chat with no language set is answered in the asker's (said inside LANGUAGE_HELP)
FROM_APP = N_(" (no language is set for this chat: each asker's Telegram language)")

#: the command menu: each command and what it does
_MENU = {
    "check": N_("check a post (reply to it) or the text that follows"),
    "help": N_("what the bot does and how to ask it"),
    "privacy": N_("what is stored, for how long, and how to delete it"),
    "settings": N_("the reply language; auto-check of forwards in a group (admins)"),
}


def bot_commands(words: Words = ENGLISH) -> list[BotCommand]:
    """The command menu, its descriptions in ``words`` (Telegram shows an app the menu
    set for its language, else the default one)."""
    return [BotCommand(command, words(said)) for command, said in _MENU.items()]


BOT_COMMANDS = bot_commands()


#: the settings set from free text: the chat setting's key and what reads the text
#: (a :class:`~bots.chat.setting_refusals.SettingRefused` says what the admin is told)
_PARSED: dict[str, tuple[str, Callable[[str], object]]] = {
    "confidence": (QUIET_MIN_CONFIDENCE, parse_min_confidence),
    "language": (LANGUAGE_KEY, parse_language),
}


async def on_start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/start``: what the bot does, in three lines, then the first-run example; in a
    private chat, ``/start c_<token>`` (a shared card's link) shows that card instead."""
    message = update.effective_message
    if message is None:
        return
    ctx = context_of(context)
    private = message.chat.type == ChatType.PRIVATE
    argument = (context.args or [""])[0]
    if private and argument.startswith(SHARE_PREFIX):
        await open_shared(ctx, message, argument)
        return
    words = await chat_words(ctx, message)
    await message.reply_text(words(START), do_quote=not private)
    await show_example(message, words)


async def on_help(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/help``: the long help (what is stored is ``/privacy``'s, pointed to in one
    line), then the first-run example."""
    message = update.effective_message
    if message is None:
        return
    ctx = context_of(context)
    words = await chat_words(ctx, message)
    await message.reply_html(words(HELP), do_quote=message.chat.type != ChatType.PRIVATE)
    await show_example(message, words)


async def on_privacy(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/privacy``: what is stored, for how long, and how to have it deleted, in the
    chat's language (English when its setting cannot be read)."""
    message = update.effective_message
    if message is None:
        return
    ctx = context_of(context)
    said = privacy_text(retention_days_of(ctx.service.retention), await chat_words(ctx, message))
    await message.reply_text(said, do_quote=message.chat.type != ChatType.PRIVATE)


def language_list(words: Words = ENGLISH) -> str:
    """``/settings language`` alone: the languages a chat can pick, in HTML, those the
    card has words for first, each by its English name and its own, said in ``words``."""
    worded = set(translated_languages()) | {ENGLISH_NAME}

    def named(name: str) -> str:
        own = own_name(name) if name != ENGLISH_NAME else name
        return html.escape(name if own == name else f"{name} ({own})")

    every = languages_matching("", translated_languages())
    return words(
        LANGUAGE_LIST,
        worded=", ".join(named(name) for name in every if name in worded),
        others=", ".join(named(name) for name in every if name not in worded),
        example=html.escape(own_name("Portuguese")),
    )


async def on_settings(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/settings`` shows the chat's settings; ``/settings autocheck on|off`` and
    ``/settings confidence 70%`` (groups) and ``/settings language NAME`` change them
    (in groups, admins only)."""
    message = update.effective_message
    if message is None:
        return
    ctx = context_of(context)
    chats = ctx.service.chats
    chat = str(message.chat_id)
    private = message.chat.type == ChatType.PRIVATE
    args = context.args or []
    wanted = args[0].lower() if args else ""
    if wanted == "language" and len(args) == 1:  # a list, for anyone: nothing changes
        await message.reply_html(
            language_list(await chat_words(ctx, message)), do_quote=not private
        )
        return
    changing = ("autocheck", "confidence", "language")
    if wanted in changing and not private and not await _is_admin(update, context):
        said = (await chat_words(ctx, message))(ADMINS_ONLY)
        await message.reply_text(said, do_quote=True)
        return
    if wanted == "autocheck" and not private and len(args) == 2 and args[1] in ("on", "off"):
        await chats.set_settings(PLATFORM, chat, {AUTO_CHECK: args[1] == "on"})
    elif wanted in _PARSED and (wanted == "language" or not private) and len(args) > 1:
        key, parse = _PARSED[wanted]
        try:
            value = parse(" ".join(args[1:]))
        except SettingRefused as exc:
            said = exc.said(await chat_words(ctx, message))
            await message.reply_text(said, do_quote=True)
            return
        await chats.set_settings(PLATFORM, chat, {key: value})
    defaults = {LANGUAGE_KEY: None, AUTO_CHECK: False, QUIET_MIN_CONFIDENCE: DEFAULT_MIN_CONFIDENCE}
    now = await chats.settings(PLATFORM, chat, defaults)
    text = settings_html(now, chat_language_of(message, now[LANGUAGE_KEY]), group=not private)
    await message.reply_html(text, do_quote=not private)


def settings_html(now: dict[str, Any], language: str, *, group: bool) -> str:
    """``/settings``' readout of the settings ``now``, in HTML, in the chat's
    ``language`` (its setting, else the asker's app's): the language the panel writes
    in and why, and in a group the auto-check switch and how sure it must be."""
    words = words_for(language)
    text = words(
        LANGUAGE_HELP,
        language=html.escape(language_named(language, words)),
        why=words(FROM_APP) if now[LANGUAGE_KEY] is None else "",
        translated=listed(sorted(translated_languages()), words("and")),
    )
    if not group:
        return text
    switch = words(AUTO_CHECK_ON if now[AUTO_CHECK] else AUTO_CHECK_OFF)
    readout = words(
        SETTINGS_HELP,
        confidence=words.percent(min_confidence_of(now[QUIET_MIN_CONFIDENCE])),
        reaction=REACTION,
        example=words.percent(0.7),
        default=words.percent(DEFAULT_MIN_CONFIDENCE),
    )
    return f"{switch}\n{readout}{text}"


async def _is_admin(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    message = update.effective_message
    if message is None:
        return False
    if message.sender_chat is not None and message.sender_chat.id == message.chat_id:
        return True  # an anonymous admin posts as the group itself
    if message.from_user is None:
        return False
    admins = context_of(context).admins  # asked of Telegram once a minute at most
    return await admins.is_admin(context.bot, message.chat_id, message.from_user.id)


def command_handlers() -> list[BaseHandler[Update, Any, Any]]:
    return [
        CommandHandler("start", on_start),
        CommandHandler("help", on_help),
        CommandHandler("privacy", on_privacy),
        CommandHandler("settings", on_settings),
    ]
