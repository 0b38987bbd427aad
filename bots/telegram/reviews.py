"""Moderators' reviews from Telegram: the card's Review button.

Who may review: the chat's administrators (in groups: ``getChatAdministrators``, asked
once a minute at most per chat, :mod:`.admins`) and the reviewers named in ``[service]
reviewers`` (compared as HMACs, in any chat). Anyone else who taps Review is refused in
one sentence (the callback query's answer, seen by them alone, in their app's
language), before anything is read from the store: a refused tap costs no store read
and, within the minute, no call to Telegram.

A reviewer's tap gets a reply to the card offering Confirm / True / False / Misleading
/ Unproven (callback data ``"r<choice>:<check id>"``; any reviewer may choose). The
choice asks for the note in a message the reviewer answers by replying (ForceReply); a
link at the end of the note is kept as the review's link. The review is stored
(:meth:`~bots.service.checks.CheckService.review`), the card is edited to show it, and,
when the verdict changed, every chat shown the card is told
(:mod:`bots.chat.corrections`).

The choices are offered once (:class:`~bots.chat.reviews.OpenReviews`): a tap on
Review while this chat's review of the check is open (its choices or its note's prompt,
until saved, cancelled or expired) is answered and posts nothing new, and reads nothing.

The review's sentences and buttons are in the chat's language: the check's, as its card
is (:func:`~bots.render.words.words_for`); a note's answer is in its prompt's.

A review waiting for its note lives in this process only (:mod:`.review_drafts`).
"""

from __future__ import annotations

import logging
import re
from typing import Any, cast

from telegram import (
    Bot,
    CallbackQuery,
    Chat,
    ForceReply,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    Update,
    User,
)
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import (
    ApplicationHandlerStop,
    BaseHandler,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from bots.chat.corrections import card_of
from bots.chat.reviews import (
    OpenReviews,
    choice_label,
    choose_sentence,
    save_review,
)
from bots.render.sentences import error_sentence, review_refusal
from bots.render.words import ENGLISH, N_, Words, translated_languages, words_for
from bots.service.records import CheckNotFoundError, Requester, ReviewRequest
from bots.service.refusals import ReviewRefused

from .buttons import GONE, NOT_FOUND
from .card_edits import card_message, edit_card
from .context import PLATFORM, TelegramContext, context_of, tappers_words
from .render import quote_text
from .review_drafts import Draft, drafts_of, wait_for_note

__all__ = [
    "EXPIRED",
    "PROMPT",
    "REFUSED",
    "may_review",
    "review_handlers",
    "review_note_handler",
]

log = logging.getLogger(__name__)

# Said in the chat's language (the check's, once it is read): ``words(REFUSED)``.
REFUSED = N_("Only a chat admin, or a reviewer named in the bot's settings, can review a verdict.")
PROMPT = N_(
    "reply to this message with a short note on why (at most 300 characters; a link at "
    "its end is kept as its source), or “-” for none."
)
EXPIRED = N_("This review has expired: tap Review on the card again.")
CANCELLED = N_("Review cancelled.")
DETAILS_EXPIRED = N_("The details of this check have expired.")
#: choice letter → the verdict it gives (:data:`bots.chat.reviews.CHOICES`; "cancel":
#: none)
CHOICES = {
    "c": "confirm",
    "t": "true",
    "f": "false",
    "m": "misleading",
    "u": "unproven",
    "x": "cancel",
}
_CANCEL = N_("Cancel")
_DATA = re.compile(r"r(?P<choice>[ctfmux]?):(?P<check_id>[A-Za-z0-9_-]{1,32})")
_OPEN = "zofia-reviews-open"


def _open(context: ContextTypes.DEFAULT_TYPE) -> OpenReviews:
    """This chat's reviews open, by ``(chat id, check id)``."""
    return cast(OpenReviews, context.bot_data.setdefault(_OPEN, OpenReviews()))


async def may_review(ctx: TelegramContext, bot: Bot, chat: Chat, user_id: int) -> bool:
    """Whether ``user_id`` may review verdicts in ``chat``: a reviewer the settings name,
    or (in a group) one of its administrators (:class:`~.admins.ChatAdmins`: asked once
    a minute at most)."""
    if ctx.service.reviewers.named(PLATFORM, str(user_id)):
        return True
    if chat.type == ChatType.PRIVATE:
        return False
    try:
        return await ctx.admins.is_admin(bot, chat.id, user_id)
    except TelegramError as exc:
        where = ctx.log_chat(chat.id)
        log.warning("could not ask for the admins of chat %s: %s", where, exc)
        return False


def choice_keyboard(check_id: str, words: Words = ENGLISH) -> InlineKeyboardMarkup:
    """Confirm / True / False, then Misleading / Unproven / Cancel, in ``words``."""
    buttons = [
        InlineKeyboardButton(
            words(_CANCEL) if choice == "cancel" else choice_label(choice, words),
            callback_data=f"r{letter}:{check_id}",
        )
        for letter, choice in CHOICES.items()
    ]
    return InlineKeyboardMarkup([buttons[:3], buttons[3:]])


async def on_review_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Review and its choices; the query is always answered (a refusal in one sentence)."""
    query = update.callback_query
    if query is None:
        return
    try:
        note = await _route(context_of(context), context, query)
    except Exception as exc:
        log.exception("review button %r failed", query.data)
        note = error_sentence(exc)
    try:
        await query.answer(note or None, show_alert=bool(note))
    except TelegramError as exc:
        log.warning("could not answer review button %r: %s", query.data, exc)


async def _route(
    ctx: TelegramContext, context: ContextTypes.DEFAULT_TYPE, query: CallbackQuery
) -> str:
    """What a tap does; the sentence to answer it with (``""``: none)."""
    match = _DATA.fullmatch(query.data or "")
    message = query.message
    # Nothing is read for a refusal: it is said in the tapper's app's language.
    tappers = tappers_words(query.from_user)
    if match is None or message is None:
        return tappers(NOT_FOUND)
    check_id, chat_id = match["check_id"], str(message.chat.id)
    choice = CHOICES.get(match["choice"])  # None: Review itself
    if not await may_review(ctx, context.bot, message.chat, query.from_user.id):
        return tappers(REFUSED)
    if not message.is_accessible or not isinstance(message, Message):
        return tappers(GONE)
    if choice is None:  # Review itself: offer the choices, once while they are open
        return await _offer(ctx, context, message, check_id, tappers)
    row = await ctx.service.chats.check(check_id, PLATFORM, chat_id)
    if row is None:
        return tappers(NOT_FOUND)
    words = words_for(row.language)  # the chat's language, as the check was answered in
    if choice == "cancel":
        _open(context).close((message.chat.id, row.id))
        await message.edit_text(words(CANCELLED))
        return ""
    card = message.reply_to_message
    draft = Draft(row.id, query.from_user.id, choice, card.message_id if card else 0, 0.0)
    await _ask_note(context, message, draft, query.from_user, words)
    return ""


async def _offer(
    ctx: TelegramContext,
    context: ContextTypes.DEFAULT_TYPE,
    card: Message,
    check_id: str,
    tappers: Words,
) -> str:
    """Review tapped by a reviewer: the choices, in a reply to the card, unless they are
    open already (then nothing is read or posted); the sentence to answer the tap with."""
    review = (card.chat.id, check_id)
    if not _open(context).open(review):
        return ""  # the tap is answered; the choices are on screen already
    try:
        # The check and its report in one trip.
        found = await ctx.service.chats.stored(check_id, PLATFORM, str(card.chat.id))
        row, report = found or (None, None)
        if row is None or report is None:
            _open(context).close(review)
            return tappers(NOT_FOUND) if row is None else words_for(row.language)(DETAILS_EXPIRED)
        words = words_for(row.language)  # the chat's, as the check was answered in
        said = choose_sentence(report.verdict, words)
        await card.reply_text(said, do_quote=True, reply_markup=choice_keyboard(check_id, words))
    except BaseException:
        _open(context).close(review)
        raise
    return ""


def _prompt(chat: Chat, user: User, words: Words, before: str = "") -> tuple[str, ForceReply]:
    """The note's prompt as HTML in ``words`` (naming the reviewer in a group, so that
    only they get the reply field) and its ForceReply."""
    said = words(PROMPT)
    if chat.type == ChatType.PRIVATE:
        text = quote_text(before + said[:1].upper() + said[1:])
        return text, ForceReply(input_field_placeholder=words("Why, in a few words"))
    name = f'<a href="tg://user?id={user.id}">{quote_text(user.first_name)}</a>'
    return quote_text(before) + f"{name}, {quote_text(said)}", ForceReply(selective=True)


def _prompt_words(text: str) -> Words | None:
    """The words a note's prompt was written in, when ``text`` is one ("Reply …" or
    "Ann, reply …", in English or a language with a catalogue); ``None`` otherwise."""
    for words in (ENGLISH, *map(words_for, translated_languages())):
        if words(PROMPT)[1:] in text:
            return words
    return None


async def _ask_note(
    context: ContextTypes.DEFAULT_TYPE, choices: Message, draft: Draft, user: User, words: Words
) -> None:
    """The choice of ``draft`` is made (by ``user``, on the ``choices``): say so on the
    choices, and ask the reviewer for the note."""
    word = choice_label(draft.verdict, words)
    await choices.edit_text(words("Review: {choice}.", choice=word))
    text, force = _prompt(choices.chat, user, words)
    prompt = await choices.reply_html(text, do_quote=True, reply_markup=force)
    wait_for_note(context, prompt, draft)


def split_note(text: str) -> tuple[str, str]:
    """A reviewer's reply as ``(note, link)``: an address at its end is the link, and
    "-" alone is no note."""
    words = text.split()
    link = words.pop() if words and words[-1].startswith(("https://", "http://")) else ""
    note = " ".join(words)
    return ("" if note in ("-", "—", "–") else note), link


async def on_note(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A reply to a note's prompt (tried before every other handler): the review is
    saved, and no other handler sees the message. Any other message goes on."""
    message = update.effective_message
    prompt = message.reply_to_message if message is not None else None
    if message is None or prompt is None or message.from_user is None:
        return
    if prompt.from_user is None or prompt.from_user.id != context.bot.id:
        return
    words = _prompt_words(prompt.text or "")  # the prompt's language: the answer's too
    if words is None:
        return
    drafts = drafts_of(context)
    draft = drafts.get(message.chat_id, prompt.message_id)
    if draft is None:
        await message.reply_text(words(EXPIRED), do_quote=True)
    elif draft.user_id == message.from_user.id:  # another's reply to it is not a note
        drafts.take(message.chat_id, prompt.message_id)
        await _save(context_of(context), context, message, draft, words)
    raise ApplicationHandlerStop


async def _save(
    ctx: TelegramContext,
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    draft: Draft,
    words: Words,
) -> None:
    """Store the review, edit the card to show it, and say it was saved (in ``words``,
    the prompt's)."""
    note, link = split_note(message.text or "")
    review = (message.chat_id, draft.check_id)
    _open(context).close(review)  # the review ends here, unless its note is asked again
    found = await ctx.service.report_for(draft.check_id)
    if found is None:
        await message.reply_text(words(DETAILS_EXPIRED), do_quote=True)
        return
    user = str(message.from_user.id if message.from_user else draft.user_id)
    moderator = Requester(PLATFORM, user, str(message.chat_id))
    request = ReviewRequest(draft.check_id, moderator, draft.verdict, note, link)
    try:
        said = await save_review(ctx.service, request, found[1].verdict, words)
    except CheckNotFoundError:
        await message.reply_text(words(NOT_FOUND), do_quote=True)
        return
    except ReviewRefused as exc:
        if exc.kind in ("reviewer_limit", "check_limit", "no_verdict", "chat_reviews_off"):
            # asking again would only be refused again
            await message.reply_text(review_refusal(exc, words), do_quote=True)
            return
        before = f"{review_refusal(exc, words)} "  # a long note, a link that is no address
        text, force = _prompt(message.chat, cast(User, message.from_user), words, before)
        prompt = await message.reply_html(text, do_quote=True, reply_markup=force)
        wait_for_note(context, prompt, draft)
        _open(context).open(review)
        return
    original = found[0].repeat_of or found[0].id
    await _edit_card(ctx, context.bot, message.chat_id, draft, original)
    await message.reply_text(said, do_quote=True)


async def _edit_card(
    ctx: TelegramContext, bot: Bot, chat_id: int, draft: Draft, original: str
) -> None:
    """The card the review was asked on, as it now reads; a card gone is passed over."""
    state = await ctx.service.card_state(draft.check_id)
    card = None if state is None else card_of(state)
    if card is None or not draft.card_message_id:
        return
    votes = await ctx.service.chats.votes(original)
    text, keyboard = card_message(ctx, card, votes)
    await edit_card(bot, chat_id, draft.card_message_id, text, keyboard, check_id=card.check_id)


def review_handlers() -> list[BaseHandler[Update, Any, Any]]:
    """Review and its choices; put them before the other buttons' handler."""
    return [CallbackQueryHandler(on_review_button, pattern=r"^r[ctfmux]?:")]


def review_note_handler() -> BaseHandler[Update, Any, Any]:
    """The notes' handler; add it in a group before every other handler's (``-1``)."""
    return MessageHandler(filters.TEXT & filters.REPLY & ~filters.COMMAND, on_note)
