"""One check for one interaction: defer, show progress, finish with the verdict embed.

:func:`check_interaction` hands an interaction to the common check flow
(:func:`bots.chat.check_flow.run_check`) with a :class:`DiscordScreen`: the deferred
response, edited while the check runs (at most every ``progress_interval_s``) and
replaced by the verdict embed with its buttons. When the 15-minute interaction token
has expired by then, the verdict is posted into the channel instead; where the server
keeps replies private (ephemeral), it goes to the requester's DMs, never into the
channel. A limit's refusal is only ever said to the requester: a public deferred
response is deleted, and the refusal follows privately (:func:`refuse_privately`).

Each server (or DM) may start one check per cooldown: a command claims the
cooldown (:class:`~bots.chat.cooldowns.Cooldowns`) in one step, with no ``await``
between reading and recording it, so concurrent commands cannot all pass, and gives it
back when its input is refused before a check starts. What a command learnt before it
got here (its chat's settings, its claim, whether its answer is private) is its
:class:`Opening`.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import discord

from bots.chat.check_flow import CheckRequest, card_target, run_check
from bots.chat.turns import Ticket
from bots.render.card import VerdictCard
from bots.render.sentences import error_sentence, waiting_sentence
from bots.render.words import ENGLISH, Words, words_for
from bots.service.records import CardPlace, Fetched
from bots.service.records import Message as Msg
from bots.service.refusals import RateLimitedError

from .buttons import card_view
from .chats import PLATFORM, requester_of
from .context import DiscordContext, askers_words
from .deliveries import (
    INTERACTION_LIFETIME,
    INVALID_WEBHOOK_TOKEN,
    LATE_PRIVATE,
    UNKNOWN_MESSAGE,
    UNKNOWN_WEBHOOK,
    delivery_target,
)
from .images import download_images, refuse_before_download
from .render import NONE, escape, progress_message, verdict_embed
from .text_files import read_text_file, refuse_text_file
from .voice import download_voice, refuse_voice

__all__ = ["DiscordScreen", "Opening", "check_interaction", "finish", "refuse_privately"]

log = logging.getLogger(__name__)


async def _show(
    interaction: discord.Interaction[Any],
    *,
    content: str | None = None,
    embed: discord.Embed | None = None,
    view: discord.ui.View | None = None,
) -> bool:
    """Edit the deferred response; ``False`` once its token has expired."""
    if interaction.is_expired():
        return False
    try:
        await interaction.edit_original_response(
            content=content,
            embed=embed,
            view=view,
            allowed_mentions=NONE,
        )
    except discord.HTTPException as exc:
        if exc.code in (INVALID_WEBHOOK_TOKEN, UNKNOWN_WEBHOOK) or exc.status == 401:
            return False
        raise
    return True


async def _tell_privately(
    interaction: discord.Interaction[Any], content: str | None, embed: discord.Embed | None
) -> None:
    """The last word of an expired private reply, as a DM to the requester (without the
    buttons: they answer only in the server the check was made in), a card introduced
    in the requester's Discord language (the DM is theirs)."""
    log.info("interaction %s expired; its private answer goes to a DM", interaction.id)
    late = askers_words(interaction)(LATE_PRIVATE)
    try:
        await interaction.user.send(
            content=content or late,
            embed=embed or discord.utils.MISSING,
            allowed_mentions=NONE,
        )
    except discord.HTTPException as exc:
        log.warning("could not DM the answer of interaction %s: %s", interaction.id, exc.text)


async def finish(
    interaction: discord.Interaction[Any],
    *,
    ephemeral: bool,
    content: str | None = None,
    embed: discord.Embed | None = None,
    view: discord.ui.View | None = None,
) -> None:
    """Show the last word: in the deferred response, else as a message in the channel,
    or, when the response was ``ephemeral``, in a DM to the requester. A response
    someone deleted gets nothing more."""
    try:
        if await _show(interaction, content=content, embed=embed, view=view):
            return
    except discord.NotFound as exc:
        if exc.code != UNKNOWN_MESSAGE:
            raise
        log.info("the response to interaction %s was deleted; nothing more is said", interaction.id)
        return
    if ephemeral:
        await _tell_privately(interaction, content, embed)
        return
    channel = interaction.channel
    if not isinstance(channel, discord.abc.Messageable):
        log.warning("interaction %s expired and its channel is unknown", interaction.id)
        return
    mention = f"{interaction.user.mention} " if content is None else ""
    try:
        await channel.send(
            content=f"{mention}{content or ''}".strip() or None,
            embed=embed or discord.utils.MISSING,
            view=view or discord.utils.MISSING,
            allowed_mentions=discord.AllowedMentions(
                everyone=False, roles=False, replied_user=False, users=[interaction.user]
            ),
        )
    except discord.HTTPException:
        log.warning("could not post the verdict of interaction %s", interaction.id)


async def refuse_privately(interaction: discord.Interaction[Any], sentence: str) -> None:
    """Say a refusal to the requester alone, where the deferred response is public: the
    response is deleted (nothing of the refused request stays in the channel) and the
    sentence follows as a private (ephemeral) message. ``sentence`` is escaped here."""
    try:
        await interaction.delete_original_response()
    except discord.HTTPException as exc:  # deleted already, or its token expired
        log.info("could not delete the response to interaction %s: %s", interaction.id, exc.text)
    try:
        await interaction.followup.send(escape(sentence), ephemeral=True, allowed_mentions=NONE)
    except discord.HTTPException as exc:
        log.warning("could not refuse interaction %s privately: %s", interaction.id, exc.text)


class DiscordScreen:
    """A check shown in the deferred response of ``interaction`` (see :func:`finish`
    for its last word once the token has expired).

    Args:
        ctx: the bot's context (for the report links).
        interaction: the deferred interaction.
        ephemeral: the response is private to the requester.
        words: the chat's language, for what the screen says itself (the card
            carries its own).
    """

    platform_errors: ClassVar[tuple[type[Exception], ...]] = (discord.HTTPException,)

    def __init__(
        self,
        ctx: DiscordContext,
        interaction: discord.Interaction[Any],
        *,
        ephemeral: bool,
        words: Words = ENGLISH,
    ) -> None:
        self.ctx = ctx
        self.interaction = interaction
        self.ephemeral = ephemeral
        self.words = words

    async def open_progress(self, check_id: str) -> None:
        """Nothing to open: the deferred response ("thinking…") shows the progress."""

    async def show_progress(self, lines: list[str]) -> bool:
        try:
            return await _show(self.interaction, content=progress_message(lines, self.words))
        except discord.NotFound as exc:  # the response was deleted: nothing more to show
            if exc.code == UNKNOWN_MESSAGE:
                return False
            log.warning("could not show progress: %s", exc.text)
            return True
        except discord.HTTPException as exc:  # progress is a courtesy; go on
            log.warning("could not show progress: %s", exc.text)
            return True

    async def show_card(self, card: VerdictCard) -> None:
        await finish(
            self.interaction,
            content=None,
            embed=verdict_embed(card),
            view=card_view(self.ctx, card),
            ephemeral=self.ephemeral,
        )
        # Where the card is (and the token that can edit it), for a moderator's correction.
        place = CardPlace(
            PLATFORM,
            str(self.interaction.channel_id or ""),
            "",
            card.verdict,
            private=self.ephemeral,
            token=self.interaction.token,
            token_expires=self.interaction.created_at + INTERACTION_LIFETIME,
        )
        await self.ctx.service.record_card(card.check_id, place)

    async def say(self, sentence: str) -> None:
        await finish(self.interaction, content=escape(sentence), ephemeral=self.ephemeral)

    async def show_waiting(self, ahead: int) -> None:
        """A DM's request waiting its turn: the deferred response says how many are
        ahead, until its progress replaces it; never raises."""
        try:
            await _show(self.interaction, content=escape(waiting_sentence(ahead, self.words)))
        except discord.HTTPException as exc:  # a courtesy, as progress is
            log.warning("could not show that interaction %s waits: %s", self.interaction.id, exc)

    async def refuse(self, exc: RateLimitedError) -> None:
        """A refusal by a limit, to the requester alone: in the command's own response
        when it is private, else privately after the public response is deleted."""
        sentence = error_sentence(exc, self.words)
        if self.ephemeral:
            await self.say(sentence)
            return
        await refuse_privately(self.interaction, sentence)

    def delivery_target(self, request: CheckRequest, checks_left: int | None) -> dict[str, Any]:
        card = card_target(request.message, checks_left)
        return delivery_target(self.interaction, card, ephemeral=self.ephemeral)


@dataclass(frozen=True)
class Opening:
    """A check command acknowledged (its response deferred) with its cooldown claimed.

    Args:
        chat: the chat its limits and settings are kept for.
        private: its answer is shown to the requester alone (the deferred response is).
        language: the chat's language (``""``: English): the server's setting, else
            the requester's Discord language.
        claim: what the chat's cooldown claim recorded; given back when no check starts.
        ticket: a DM's place in its user's line (:class:`~bots.chat.turns.Turns`),
            taken when the command came.
    """

    chat: str
    private: bool
    language: str
    claim: float
    ticket: Ticket | None = None


@dataclass(frozen=True)
class Asked:
    """What a Discord command asks to have checked.

    Args:
        text: the post's text (with images, their caption: it may be empty).
        images: attachments to download and check (see :mod:`.images`).
        text_file: the post's text as a ``.txt`` file (:mod:`.text_files`), read once
            the request is admitted; it follows ``text``.
        origin, published: where the post came from and when, if known.
        voice: a voice note to download, hear and check (see :mod:`.voice`).
    """

    text: str
    images: Sequence[discord.Attachment] = ()
    text_file: discord.Attachment | None = None
    origin: str = ""
    published: dt.date | None = None
    voice: discord.Attachment | None = None


async def check_interaction(
    ctx: DiscordContext, interaction: discord.Interaction[Any], opening: Opening, asked: Asked
) -> None:
    """Check what ``asked`` asks for the user of ``interaction``, whose response is
    deferred, and answer with the verdict. The cooldown claim is given back when no
    check starts (the text, an image's or a voice note's declared size is refused, or
    limits apply)."""
    images, text_file, voice = asked.images, asked.text_file, asked.voice
    words = words_for(opening.language)

    def refuse() -> None:
        """A file too large, too many images, or a voice note too large or too long, is
        refused before it costs anything."""
        if text_file is not None:
            refuse_text_file(text_file, words)
        if images:
            refuse_before_download(images, ctx.images)
        if voice is not None:
            refuse_voice(voice, ctx.audio)

    async def fetch() -> Fetched:
        more = await read_text_file(text_file, words) if text_file is not None else ""
        audio = await download_voice(voice, ctx.audio, words) if voice is not None else None
        return Fetched(more, tuple(await download_images(images, words)), audio)

    message = Msg(
        asked.text,
        fetch=fetch if images or text_file is not None or voice is not None else None,
        refuse=refuse,
        origin=asked.origin,
        published=asked.published,
        language=opening.language,
    )
    check = CheckRequest(
        message,
        requester_of(interaction),
        on_refused=functools.partial(ctx.cooldowns.release, opening.chat, opening.claim),
        has_media=bool(images) or voice is not None,
        # A DM's requests are answered in turn, as a private chat's are on Telegram.
        ticket=opening.ticket,
    )
    screen = DiscordScreen(ctx, interaction, ephemeral=opening.private, words=words)
    interval = ctx.settings.progress_interval_s
    await run_check(ctx.service, check, screen, progress_interval_s=interval)
