"""One check in Telegram: a reply that follows the check and becomes its verdict card.

:func:`check_message` hands a message to the common check flow
(:func:`bots.chat.check_flow.run_check`) with a :class:`TelegramScreen`: a reply,
"checking…" with a Cancel button, edited as the check goes and turned into the
verdict card, or into one sentence saying what went wrong.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from telegram import InlineKeyboardMarkup, Message
from telegram.constants import ChatType
from telegram.error import BadRequest, TelegramError

from bots.chat.check_flow import CheckRequest, card_target, run_check
from bots.chat.quiet import DEFAULT_MIN_CONFIDENCE, QUIET_MIN_CONFIDENCE, min_confidence_of
from bots.chat.turns import Ticket
from bots.render.card import VerdictCard
from bots.render.languages import LANGUAGE_KEY
from bots.render.sentences import error_sentence, refusal_reason, waiting_sentence
from bots.render.words import ENGLISH, N_, Words, words_for
from bots.service.records import CardPlace, Fetched, Requester
from bots.service.records import Message as Msg
from bots.service.refusals import RateLimitedError

from .card_edits import card_message, uneditable
from .context import PLATFORM, TelegramContext, chat_language_of
from .deliveries import delivery_target, react
from .images import download_images
from .posts import forwarded_from
from .render import NO_PREVIEW, progress_html, progress_keyboard, quote_text
from .voice import VoiceFile, download_voice, refuse_voice

__all__ = [
    "AUTO_CHECK",
    "LISTENING",
    "READING",
    "Asked",
    "ChatRules",
    "TelegramScreen",
    "chat_rules",
    "check_message",
]

log = logging.getLogger(__name__)

#: the first answer to an image post, before its images are downloaded and read
READING = N_("Reading the image…")
READING_MANY = N_("Reading the images…")
LISTENING = N_("Listening to the voice note…")
#: the chat setting an admin turns on to have a group's forwarded posts checked
AUTO_CHECK = "auto_check"


class TelegramScreen:
    """A check shown in a reply to ``anchor`` (the message that asked, or the post):
    "checking…" with a Cancel button while it runs, then the card or a sentence. With
    no progress shown, the card or the sentence is a reply of its own.

    Args:
        ctx: the bot's context (for the report links).
        anchor: the message the answer replies to.
        chat_id: the chat checked in (a deliver job's target).
        words: the chat's language, for what the screen says itself (the card
            carries its own).
    """

    platform_errors: ClassVar[tuple[type[Exception], ...]] = (TelegramError,)

    def __init__(
        self,
        ctx: TelegramContext,
        anchor: Message,
        chat_id: int,
        *,
        words: Words = ENGLISH,
    ) -> None:
        self.ctx = ctx
        self.words = words
        self.anchor = anchor
        self.chat_id = chat_id
        self.reply: Message | None = None  # the "checking…" message, once sent
        self._keyboard: InlineKeyboardMarkup | None = None
        self._shown = ""
        self._editing: asyncio.Task[None] | None = None  # the last progress edit queued
        self.opened = ctx.refusals.opening(chat_id)  # called once the answer is shown

    async def open_reading(self, images: int, *, voice: bool = False) -> None:
        """Answer an image post or a voice note at once, before its images are read or
        it is heard (in place of its line in the queue, if it waited): this reply becomes
        the progress message."""
        text = self.words(LISTENING if voice and not images else READING)
        if images > 1:
            text = self.words(READING_MANY)
        try:
            if self.reply is None:
                self.reply = await self.anchor.reply_text(text, do_quote=True)
            else:
                edited = await self.reply.edit_text(text)
                self.reply = edited if isinstance(edited, Message) else self.reply
        except TelegramError as exc:  # a courtesy: the progress message follows anyway
            where = self.ctx.log_chat(self.chat_id)
            log.warning("could not answer an image post in chat %s: %s", where, exc)

    async def show_waiting(self, ahead: int) -> None:
        """Answer a request waiting its turn at once, with how many are ahead: this reply
        becomes the progress message. It counts as the request's answer being shown."""
        try:
            self.reply = await self.anchor.reply_text(
                waiting_sentence(ahead, self.words), do_quote=True
            )
        except TelegramError as exc:  # a courtesy: the progress message follows anyway
            where = self.ctx.log_chat(self.chat_id)
            log.warning("could not answer a waiting post in chat %s: %s", where, exc)
        finally:
            self.opened()

    async def open_progress(self, check_id: str) -> None:
        self._keyboard = progress_keyboard(check_id, self.words)
        text = progress_html([], self.words)
        if self.reply is not None:  # "Reading the image…" becomes the progress
            try:
                edited = await self.reply.edit_text(
                    text, parse_mode="HTML", reply_markup=self._keyboard
                )
            except TelegramError as exc:
                log.warning("could not edit the reading message: %s", exc)
            else:
                if isinstance(edited, Message):
                    self.reply = edited
                self._shown = text
                return
        self.reply = await self.anchor.reply_html(text, do_quote=True, reply_markup=self._keyboard)
        self._shown = self.reply.text_html or ""

    async def show_progress(self, lines: list[str]) -> bool:
        """Queue the edit to ``lines`` and return: the edit waits for the chat's turn
        (:mod:`.pacing`) while the check goes on, and the next state drops it if it is
        still waiting then."""
        text = progress_html(lines, self.words)
        if self.reply is None or text == self._shown:
            return True
        await self._drop_progress()
        self._shown = text
        edit = asyncio.get_running_loop().create_task(self._edit_progress(self.reply, text))
        self.ctx.work.add(edit)  # held, and waited for on shutdown, as a check is
        self._editing = edit
        return True

    async def _edit_progress(self, reply: Message, text: str) -> None:
        try:
            await reply.edit_text(text, parse_mode="HTML", reply_markup=self._keyboard)
        except TelegramError as exc:  # progress is a courtesy: a failed edit never stops a check
            log.warning("progress edit failed: %s", exc)
            if self._shown == text:
                self._shown = ""

    async def _drop_progress(self) -> None:
        """Drop the progress edit still waiting for its turn: a newer state, or the card,
        made it stale. One already on its way is answered first (:mod:`.pacing`), so
        nothing sent next overtakes it."""
        edit, self._editing = self._editing, None
        if edit is not None and not edit.done():
            edit.cancel()
            await asyncio.wait({edit})

    async def show_card(self, card: VerdictCard) -> None:
        """The card in place of the progress message (or in a reply). The check counts as
        opening until the card is sent (or failed to be): a burst's held refusal waits
        for it (see :class:`~.refusals.Refusals`)."""
        text, keyboard = card_message(self.ctx, card)
        try:
            await self._drop_progress()
            where = await self._replace(text, keyboard)
        finally:
            self.opened()
        # Where the card is, so that a moderator's correction reaches it.
        place = CardPlace(PLATFORM, str(self.chat_id), str(where), card.verdict)
        await self.ctx.service.record_card(card.check_id, place)

    async def _replace(self, text: str, keyboard: InlineKeyboardMarkup | None) -> int:
        """Put ``text`` (HTML) with ``keyboard`` in place of the progress message, or in a
        reply to the anchor when there is none or it can no longer be edited (someone
        deleted it: :func:`~.card_edits.uneditable`); the id of the message that shows it."""
        if self.reply is not None:
            try:
                await self.reply.edit_text(
                    text, parse_mode="HTML", reply_markup=keyboard, link_preview_options=NO_PREVIEW
                )
                return self.reply.message_id
            except BadRequest as exc:
                if not uneditable(exc):
                    raise
                where = self.ctx.log_chat(self.chat_id)
                log.info("the progress message in chat %s is gone (%s): sent anew", where, exc)
        sent = await self.anchor.reply_html(
            text, do_quote=True, reply_markup=keyboard, link_preview_options=NO_PREVIEW
        )
        self.reply = sent  # an early card is completed in this message
        return sent.message_id

    async def say(self, sentence: str) -> None:
        """One sentence in place of the progress message (or in a reply); never raises.
        The check counts as opening until it is sent (or failed to be)."""
        try:
            await self._drop_progress()
            await self._replace(quote_text(sentence), None)
        except TelegramError as exc:
            log.warning("could not tell chat %s: %s", self.ctx.log_chat(self.anchor.chat_id), exc)
        finally:
            self.opened()

    async def refuse(self, exc: RateLimitedError) -> None:
        """A refusal by a limit: held with the chat's others, said once per burst (see
        :class:`~.refusals.Refusals`); in place of a message already shown, at once.

        A held refusal stops counting its own check as opening first: it waits for the
        chat's checks still opening, of which it is no longer one."""
        sentence = error_sentence(exc, self.words)
        if self.reply is not None:
            await self.say(sentence)
            return
        self.opened()
        reason = refusal_reason(exc.refusal, self.words)
        await self.ctx.refusals.refuse(
            self.anchor, sentence, exc.retry_after_s, self.words, reason=reason
        )

    def delivery_target(self, request: CheckRequest, checks_left: int | None) -> dict[str, Any]:
        card = card_target(request.message, checks_left)
        if self.reply is None:  # unasked: the card, if any, replies to the post
            return delivery_target(
                self.chat_id,
                card,
                reply_to=self.anchor.message_id,
                min_confidence=request.min_confidence,
            )
        return delivery_target(
            self.chat_id, card, message_id=self.reply.message_id, reply_to=self.anchor.message_id
        )


@dataclass(frozen=True)
class ChatRules:
    """What a check needs of its chat's settings (:func:`chat_rules`).

    Args:
        language: the chat's language (:func:`~.context.chat_language_of`).
        min_confidence: an unasked check's least confidence for a card.
        auto_check: an admin turned the group's auto-check on.
    """

    language: str
    min_confidence: float = DEFAULT_MIN_CONFIDENCE
    auto_check: bool = False


async def chat_rules(ctx: TelegramContext, anchor: Message, *, unasked: bool) -> ChatRules:
    """The rules of the chat of ``anchor``, read in one trip: its language (its setting,
    else that of the app of whoever ``anchor`` is from) and, for an ``unasked`` check,
    its least confidence for a card and whether its auto-check is on."""
    defaults: dict[str, Any] = {LANGUAGE_KEY: None}
    if unasked:
        defaults.update({QUIET_MIN_CONFIDENCE: DEFAULT_MIN_CONFIDENCE, AUTO_CHECK: False})
    chat = await ctx.service.chats.settings(PLATFORM, str(anchor.chat_id), defaults)
    return ChatRules(
        chat_language_of(anchor, chat[LANGUAGE_KEY]),
        min_confidence_of(chat.get(QUIET_MIN_CONFIDENCE)),
        bool(chat.get(AUTO_CHECK)),
    )


@dataclass(frozen=True)
class Asked:
    """What a Telegram message asks to have checked.

    Args:
        target: the post: the message whose text (and images) are checked.
        text: its text to check.
        user_id: who asked.
        request: the message that asked (``/check``, a mention), answered in a reply;
            ``None``: the answer replies to ``target``.
        images: the messages whose images are checked with the text (``target``, or an
            album's messages).
        unasked: a group's auto-check: no progress is shown, and only a sure alarm gets
            the card (:func:`~bots.chat.quiet.group_answer`).
        voice: the voice note heard and checked with the text (``target``'s).
    """

    target: Message
    text: str
    user_id: int
    request: Message | None = None
    images: Sequence[Message] = ()
    unasked: bool = False
    voice: VoiceFile | None = None


def _check_request(
    ctx: TelegramContext,
    asked: Asked,
    screen: TelegramScreen,
    rules: ChatRules,
    ticket: Ticket | None,
) -> CheckRequest:
    """What :func:`check_message` asks the check flow: ``asked``, its images and voice
    note downloaded when the service asks (``screen`` says it reads them, unless the
    check is unasked), a voice note refused from what Telegram declares before that,
    under its chat's ``rules``, in its place in a private chat's line (``ticket``)."""
    target, images, chat_id = asked.target, asked.images, asked.target.chat_id
    voice = asked.voice

    def refuse() -> None:
        if voice is not None:
            refuse_voice(voice, ctx.audio)

    async def fetch() -> Fetched:
        if not asked.unasked:  # downloading and reading or hearing takes a moment
            await screen.open_reading(len(images), voice=voice is not None)
        bot = target.get_bot()
        words = screen.words
        audio = await download_voice(bot, voice, ctx.audio, words) if voice is not None else None
        found = await download_images(bot, images, ctx.images, words)
        return Fetched(images=tuple(found), audio=audio)

    origin, published = forwarded_from(target, screen.words)
    message = Msg(
        asked.text,
        fetch=fetch if images or voice is not None else None,
        refuse=refuse,
        origin=origin,
        published=published,
        language=rules.language,
        allow_private_urls=ctx.allow_private_urls,
    )
    private, in_group = ticket is not None, target.chat.type != ChatType.PRIVATE
    return CheckRequest(
        message,
        Requester(PLATFORM, str(asked.user_id), str(chat_id), private=private, in_group=in_group),
        unasked=asked.unasked,
        has_media=bool(images) or voice is not None,
        min_confidence=rules.min_confidence,
        react=lambda: react(ctx, target.get_bot(), chat_id, target.message_id),
        ticket=ticket,
    )


async def check_message(
    ctx: TelegramContext,
    asked: Asked,
    *,
    rules: ChatRules | None = None,
    screen_type: type[TelegramScreen] = TelegramScreen,
) -> None:
    """Check what ``asked`` asks; answer in a reply to the message that asked, or to the
    post itself. Its images are checked with the text; a refused image gets one
    sentence, and no check is stored.

    The reply starts as "checking…" with a Cancel button, is edited as the check goes,
    and ends as the verdict card (at once for a repeat answered from the store). An
    unasked check (a group's auto-check) shows no progress: a sure alarm gets the card,
    else a reaction or nothing (:func:`~bots.chat.quiet.group_answer`).

    It follows its chat's ``rules`` (:func:`chat_rules`: read here unless the caller
    read them); ``screen_type`` shows it (a guest message's
    :class:`~.guest.GuestScreen` answers its query once). In a private chat it takes
    its place in the user's line at once (:class:`~bots.chat.turns.Turns`), so that
    posts forwarded together are answered in the order they came, one at a time.
    """
    target, user_id = asked.target, asked.user_id
    private = target.chat.type == ChatType.PRIVATE
    with ctx.turns.place(str(user_id) if private else None) as ticket:  # before any await
        anchor = asked.request or target
        if rules is None:
            rules = await chat_rules(ctx, anchor, unasked=asked.unasked)
        screen = screen_type(ctx, anchor, target.chat_id, words=words_for(rules.language))
        check = _check_request(ctx, asked, screen, rules, ticket)
        try:
            await run_check(
                ctx.service, check, screen, progress_interval_s=ctx.settings.progress_interval_s
            )
        finally:
            screen.opened()
