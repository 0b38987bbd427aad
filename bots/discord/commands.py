"""The application commands: ``/factcheck``, the "Fact-check" message command,
``/factcheck-settings``, ``/privacy`` and ``/factcheck-help`` (:mod:`.help`).

``/factcheck``'s ``text`` takes at most :data:`MAX_TEXT` characters (Discord's client
refuses a longer paste before the bot sees it); a longer post comes as a ``.txt`` file
(its ``file`` option), or through the message command on a message whose text Discord
turned into ``message.txt`` (:mod:`.text_files`).

The commands only route: they read the server's settings, claim its cooldown and
acknowledge Discord (:func:`open_check`), find the text and images (the options, the
linked message, or the message the menu was opened on) and hand them to
:func:`~bots.discord.check_flow.check_interaction`. A message link must point into the
server (or DM) the command was used in: the bot reads no other server's messages for
anyone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from typing import Any, NamedTuple

import discord
from discord import app_commands

from bots.chat.setting_refusals import SettingRefused
from bots.chat.turns import Ticket
from bots.render.sentences import RESTARTING, UNSUPPORTED_INPUT, cooldown_sentence
from bots.render.words import N_, chat_language, words_for

from .chats import chat_of
from .check_flow import Asked, Opening, check_interaction, finish
from .context import DiscordContext, askers_words, context_of
from .guild_settings import (
    MAX_COOLDOWN_S,
    MAX_LANGUAGE,
    guild_settings,
    language_choices,
    save_guild_settings,
)
from .help import factcheck_help, privacy
from .images import is_image, message_images
from .posts import message_origin, message_text
from .text_files import NOT_TEXT, is_text_file, text_file_of
from .voice import message_voice

__all__ = [
    "SETTINGS_WAIT_S",
    "MessageLink",
    "build_commands",
    "open_check",
    "opened_check",
    "parse_message_link",
]

log = logging.getLogger(__name__)

#: the longest ``text`` a member's client sends (Discord allows up to 6,000 for an
#: option; 4,000 is what its message box takes with Nitro, and longer goes as a file)
MAX_TEXT = 4000
#: how long a command waits for its chat's settings before it acknowledges Discord
#: without them (Discord drops an interaction not acknowledged within 3 s)
SETTINGS_WAIT_S = 1.0
_LINK = re.compile(
    r"https?://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/channels/"
    r"(?P<guild>\d+|@me)/(?P<channel>\d+)/(?P<message>\d+)/?",
    re.IGNORECASE,
)
EVERYWHERE = {"guilds": True, "dms": True, "private_channels": True}
# Each said in words (``words(NOT_HERE)``): the requester's Discord language when refused
# before the server's settings are read, else the check's.
NOT_HERE = N_("I can only check messages from this server.")
OTHER_CHANNEL = N_(
    "I can only check messages linked from their own channel: run /factcheck there, "
    "or use Apps → Fact-check on the message."
)
NOT_FOUND = N_("That message was not found.")
#: a message with no text, no image and nothing else to see (an embed alone, say)
NO_TEXT_SEEN = N_(
    "That message has no text I can see. Open its menu (Apps → Fact-check) instead, or "
    "paste its text into /factcheck."
)
CANNOT_READ = N_(
    "I cannot read that channel. Use Apps → Fact-check on the message, "
    "or paste its text into /factcheck."
)
ONE_OR_OTHER = N_("Give either the post (`text`, `image`, `file`) or a `message_link`.")
NOT_A_LINK = N_("That is not a Discord message link (Copy Message Link gives one).")
ADMINS_ONLY = N_("Only server admins (Manage Server) can change these settings.")


class MessageLink(NamedTuple):
    """A parsed message link; ``guild`` is ``None`` for a DM (``@me``) link."""

    guild: int | None
    channel: int
    message: int


def parse_message_link(link: str) -> MessageLink | None:
    """The guild, channel and message ids of a Discord message link, or ``None``."""
    match = _LINK.fullmatch(link.strip())
    if match is None:
        return None
    guild = None if match["guild"] == "@me" else int(match["guild"])
    return MessageLink(guild, int(match["channel"]), int(match["message"]))


def _links_here(link: MessageLink, interaction: discord.Interaction[Any]) -> bool:
    """Whether the link claims the interaction's own server (or its own DM channel)."""
    if link.guild is None:
        return interaction.guild_id is None and link.channel == interaction.channel_id
    return link.guild == interaction.guild_id


def _refusal(link: MessageLink, interaction: discord.Interaction[Any]) -> str | None:
    """Why the requester may not have the linked message checked, before anything is read.

    The bot reads with its own permissions, so a link is followed only where the
    requester's are known to allow it: in the channel the command was run in (whose
    permissions Discord sends with the interaction), and only if they may read its
    history. Anything else is refused without a request that could tell whether the
    message exists.
    """
    if not _links_here(link, interaction):
        return NOT_HERE
    if link.channel != interaction.channel_id:
        return OTHER_CHANNEL
    if interaction.guild_id is None:  # the requester's own DM
        return None
    allowed = interaction.permissions
    if not (allowed.view_channel and allowed.read_message_history):
        return NOT_FOUND
    return None


def _language(interaction: discord.Interaction[Any], setting: str | None = None) -> str:
    """The language a check is answered in: the server's ``setting`` (``None``: never
    set, or not read yet), else the requester's Discord language when the bot has its
    words (:func:`~bots.render.words.chat_language`)."""
    return chat_language(setting, interaction.locale.value)


@contextlib.asynccontextmanager
async def opened_check(
    ctx: DiscordContext, interaction: discord.Interaction[Any]
) -> AsyncIterator[Opening | None]:
    """:func:`open_check` for the block, held among the bot's work in flight (a shutdown
    waits for it: :class:`~bots.chat.in_flight.InFlight`); once a shutdown has begun,
    the requester is told the bot is restarting and nothing is opened (``None``). A DM's
    request takes its place in the user's line first, before any ``await`` (so that
    requests are answered in the order they came: :class:`~bots.chat.turns.Turns`), and
    leaves it when the block ends, if its check has not already."""
    with ctx.work.hold() as taken:
        if not taken:
            await _restarting(interaction)
            yield None
            return
        dm = interaction.guild_id is None
        with ctx.turns.place(str(interaction.user.id) if dm else None) as ticket:
            yield await open_check(ctx, interaction, ticket)


async def _restarting(interaction: discord.Interaction[Any]) -> None:
    """Tell the requester, privately, that the bot is restarting (a shutdown has begun),
    in their Discord language: a bot shutting down reads no store."""
    said = askers_words(interaction)(RESTARTING)
    try:
        await interaction.response.send_message(said, ephemeral=True)
    except discord.HTTPException as exc:
        log.info("could not tell interaction %s the bot is restarting: %s", interaction.id, exc)


async def open_check(
    ctx: DiscordContext, interaction: discord.Interaction[Any], ticket: Ticket | None = None
) -> Opening | None:
    """Read the chat's settings (off the event loop), claim its cooldown and defer the
    response, private if the settings say so; ``None`` when a check started here too
    recently (the user is told so, privately). ``ticket``: a DM's place in its line.

    Discord drops an interaction that is not acknowledged within 3 s, and a busy store
    may take longer: settings not read within :data:`SETTINGS_WAIT_S` are not waited
    for. The response is deferred at once, privately (the side that never shows a
    private server's answer to the channel), and the check goes on when they come.
    The check's language is the server's, and where none was set, the requester's
    Discord language when the bot has its words (:func:`~bots.render.words.chat_language`).
    """
    chat = chat_of(interaction)
    read = asyncio.ensure_future(guild_settings(ctx.service, chat, ctx.settings))
    read.add_done_callback(lambda done: done.cancelled() or done.exception())  # seen
    done, _ = await asyncio.wait({read}, timeout=SETTINGS_WAIT_S)
    if not done:
        log.warning(
            "the settings of chat %s are slow to read; deferring privately",
            ctx.log_chat(chat),
        )
        await interaction.response.defer(thinking=True, ephemeral=True)
    found = await read
    deferred = interaction.response.is_done()
    private = found.ephemeral or deferred
    language = _language(interaction, found.language)
    left, claim = ctx.cooldowns.claim(chat, found.cooldown_s)  # no await in between
    if left > 0:
        log.info("request in chat %s refused: cooldown, %.0f s left", ctx.log_chat(chat), left)
        where = "server" if interaction.guild_id else "chat"
        said = cooldown_sentence(left, where, words_for(language))
        if deferred:
            await finish(interaction, content=said, ephemeral=True)
        else:
            await interaction.response.send_message(said, ephemeral=True)
        return None
    if not deferred:
        await interaction.response.defer(thinking=True, ephemeral=private)
    return Opening(chat, private, language, claim, ticket)


async def _linked_message(
    interaction: discord.Interaction[Any], link: MessageLink
) -> discord.Message | str:
    """The linked message (in the interaction's own channel: see :func:`_refusal`), or
    why it cannot be checked."""
    client: discord.Client = interaction.client
    channel = client.get_partial_messageable(link.channel, guild_id=interaction.guild_id)
    try:
        message: discord.Message = await channel.fetch_message(link.message)
        return message
    except discord.Forbidden:
        return CANNOT_READ
    except discord.NotFound:
        return NOT_FOUND


async def _check_message(
    ctx: DiscordContext,
    interaction: discord.Interaction[Any],
    message: discord.Message,
    opening: Opening,
) -> None:
    text = message_text(message)
    images = message_images(message)
    text_file = text_file_of(message)  # a message too long for Discord: message.txt
    voice = message_voice(message)  # a voice message, or an audio file
    if not text.strip() and not images and text_file is None and voice is None:
        ctx.cooldowns.release(opening.chat, opening.claim)
        unreadable = message.stickers or message.attachments  # a sticker, a video…
        content = UNSUPPORTED_INPUT if unreadable else NO_TEXT_SEEN
        said = words_for(opening.language)(content)
        await finish(interaction, content=said, ephemeral=opening.private)
        return
    published = message.created_at.date()
    origin = message_origin(message, words_for(opening.language))
    asked = Asked(text, images, text_file, origin, published, voice)
    await check_interaction(ctx, interaction, opening, asked)


def _read_request(
    interaction: discord.Interaction[Any],
    text: str | None,
    image: discord.Attachment | None,
    message_link: str | None,
    file: discord.Attachment | None,
) -> tuple[MessageLink | None, str | None]:
    """``/factcheck``'s message link, parsed, and why the request is refused before
    anything is read (``None``: it is not): the first that holds."""
    link = parse_message_link(message_link) if message_link is not None else None
    if (text is not None or image is not None or file is not None) == (message_link is not None):
        return link, ONE_OR_OTHER
    if file is not None and not is_text_file(file):
        return link, NOT_TEXT
    if message_link is not None and link is None:
        return link, NOT_A_LINK
    if image is not None and not is_image(image):
        return link, UNSUPPORTED_INPUT  # a video, a voice message, a file as the image
    return link, _refusal(link, interaction) if link is not None else None


@app_commands.describe(
    text=N_("The post's text (or a link to an article); with an image, its caption."),
    image=N_("An image of the post (a screenshot, a camera shot with text on it)."),
    message_link=N_("A link to a message in this server."),
    file=N_("A post too long to paste (over 4,000 characters), as a .txt file."),
)
async def factcheck(
    interaction: discord.Interaction[Any],
    text: app_commands.Range[str, 1, MAX_TEXT] | None = None,
    image: discord.Attachment | None = None,
    message_link: str | None = None,
    file: discord.Attachment | None = None,
) -> None:
    """Fact-check a post: paste its text, attach its image, or link to a message."""
    ctx = context_of(interaction)
    link, refused = _read_request(interaction, text, image, message_link, file)
    if refused is not None:
        # Said before the server's language is read: in the requester's.
        said = askers_words(interaction)(refused)
        await interaction.response.send_message(said, ephemeral=True)
        return
    async with opened_check(ctx, interaction) as opening:
        if opening is None:
            return
        if link is None:
            images = [image] if image is not None else []
            asked = Asked(text or "", images, file)
            await check_interaction(ctx, interaction, opening, asked)
            return
        found = await _linked_message(interaction, link)
        if isinstance(found, str):
            ctx.cooldowns.release(opening.chat, opening.claim)
            said = words_for(opening.language)(found)
            await finish(interaction, content=said, ephemeral=opening.private)
            return
        await _check_message(ctx, interaction, found, opening)


async def fact_check_message(
    interaction: discord.Interaction[Any], message: discord.Message
) -> None:
    """Fact-check the message the menu was opened on (it comes with the interaction)."""
    ctx = context_of(interaction)
    async with opened_check(ctx, interaction) as opening:
        if opening is not None:
            await _check_message(ctx, interaction, message, opening)


@app_commands.describe(
    cooldown_s=N_("Least seconds between two checks started here."),
    ephemeral=N_("Show verdicts only to whoever asked."),
    language=N_("The language the panel writes in and the card's words follow (English resets)."),
)
async def factcheck_settings(
    interaction: discord.Interaction[Any],
    cooldown_s: app_commands.Range[float, 0.0, MAX_COOLDOWN_S] | None = None,
    ephemeral: bool | None = None,
    language: app_commands.Range[str, 1, MAX_LANGUAGE] | None = None,
) -> None:
    """Show or change this server's fact-check settings."""
    ctx = context_of(interaction)
    permissions = interaction.permissions
    if interaction.guild_id is None or not permissions.manage_guild:
        said = askers_words(interaction)(ADMINS_ONLY)
        await interaction.response.send_message(said, ephemeral=True)
        return
    chat = chat_of(interaction)
    await interaction.response.defer(thinking=True, ephemeral=True)  # before the store
    try:
        await save_guild_settings(
            ctx.service, chat, cooldown_s=cooldown_s, ephemeral=ephemeral, language=language
        )
    except SettingRefused as exc:  # said before the settings are read: the asker's words
        await interaction.followup.send(exc.said(askers_words(interaction)), ephemeral=True)
        return
    now = await guild_settings(ctx.service, chat, ctx.settings)
    words = words_for(_language(interaction, now.language))
    await interaction.followup.send(now.describe(words), ephemeral=True)


def build_commands() -> list[app_commands.Command[Any, ..., None] | app_commands.ContextMenu]:
    """Fresh command objects for a client's tree (one set per client)."""
    slash: app_commands.Command[Any, ..., None] = app_commands.Command(
        name="factcheck",
        description=N_("Fact-check a post: paste its text, attach its image, or link a message."),
        callback=factcheck,
    )
    menu = app_commands.ContextMenu(name="Fact-check", callback=fact_check_message)
    for command in (slash, menu):
        app_commands.allowed_installs(guilds=True, users=True)(command)
        app_commands.allowed_contexts(**EVERYWHERE)(command)
    settings: app_commands.Command[Any, ..., None] = app_commands.Command(
        name="factcheck-settings",
        description=N_("Show or change this server's fact-check settings (admins)."),
        callback=factcheck_settings,
    )
    settings.default_permissions = discord.Permissions(manage_guild=True)
    settings.autocomplete("language")(language_choices)
    app_commands.allowed_installs(guilds=True, users=False)(settings)
    app_commands.allowed_contexts(guilds=True, dms=False, private_channels=False)(settings)
    told: app_commands.Command[Any, ..., None] = app_commands.Command(
        name="privacy",
        description=N_("What the fact-check bot stores, for how long, and how to delete it."),
        callback=privacy,
    )
    helped: app_commands.Command[Any, ..., None] = app_commands.Command(
        name="factcheck-help",
        description=N_("What the fact-check bot does, with an example of a post and its card."),
        callback=factcheck_help,
    )
    for command in (told, helped):
        app_commands.allowed_installs(guilds=True, users=True)(command)
        app_commands.allowed_contexts(**EVERYWHERE)(command)
    return [slash, menu, settings, told, helped]
