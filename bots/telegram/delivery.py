"""One check from a Telegram message to its verdict card.

:func:`read_post` turns a message (with its forward origin and pictures) into a post;
:func:`deliver_check` submits it, keeps a "checking…" message up to date, and turns
that message into the verdict card, or into one sentence saying what went wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

from telegram import (
    Bot,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    Message,
    MessageOrigin,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
    ReplyParameters,
)
from telegram.constants import ChatAction
from telegram.error import BadRequest, TelegramError

from bots.common.card import verdict_card
from bots.common.languages import LANGUAGE_KEY
from bots.common.posts import post_from_message
from bots.common.sentences import error_sentence
from storage.deliveries import Claim
from storage.service import CheckFailedError, Outcome, Requester
from zofia_engine.errors import InvalidPostError, ZofiaError
from zofia_engine.images.reader import NO_TEXT as NO_TEXT_IN_PICTURE
from zofia_engine.post import Post, ProgressEvent

from .photos import download_pictures
from .progress import ProgressMessage
from .render import card_html, card_keyboard, progress_html, progress_keyboard, quote_text
from .state import PLATFORM, BotState

__all__ = [
    "NOTHING_TO_CHECK",
    "NO_TEXT",
    "deliver_check",
    "describe_origin",
    "post_delivered",
    "post_text",
    "read_post",
    "until_settled",
]

log = logging.getLogger(__name__)

#: a picture with no text in it (the engine's sentence, whichever layer finds it)
NO_TEXT = NO_TEXT_IN_PICTURE
NOTHING_TO_CHECK = (
    "I found nothing to check in this message: please send the post's text, a link, "
    "or a photo or screenshot of it."
)
INTERRUPTED = (
    "The bot restarted before this check finished. It will resume; send the post again "
    "in a few minutes to get the answer."
)
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
#: what an unasked check (auto-check in a group) keeps to itself
QUIET_UNASKED = ("no_claim", "satire")


def describe_origin(origin: MessageOrigin) -> str:
    """Who a forwarded message came from, in words: a channel, a chat, a user."""
    if isinstance(origin, MessageOriginChannel):
        name = origin.chat.title or "a channel"
        at = f" (@{origin.chat.username})" if origin.chat.username else ""
        by = f", signed {origin.author_signature}" if origin.author_signature else ""
        return f"channel {name}{at}{by}"
    if isinstance(origin, MessageOriginChat):
        name = origin.sender_chat.title or "a group"
        return f"chat {name}"
    if isinstance(origin, MessageOriginUser):
        at = f" (@{origin.sender_user.username})" if origin.sender_user.username else ""
        return f"user {origin.sender_user.full_name}{at}"
    if isinstance(origin, MessageOriginHiddenUser):
        return f"user {origin.sender_user_name} (hidden account)"
    return "a forwarded message"


def post_text(message: Message) -> str:
    """The text to check in a message: its text or its photo's caption."""
    return (message.text or message.caption or "").strip()


async def read_post(
    message: Message,
    text: str,
    *,
    pictures: Sequence[tuple[bytes, str]] = (),
    language: str = "",
    allow_private_urls: bool = False,
) -> Post:
    """The post ``message`` stands for, with ``text`` as its text (a link alone is
    fetched) and ``pictures`` (``(bytes, media type)``) as its pictures, which the
    check service reads.

    A forwarded message's origin becomes the post's origin, and the original date its
    publication date (UTC); ``language`` is the chat's reply language.

    Raises:
        InvalidPostError: a link that cannot be fetched.
    """
    origin, published = "", None
    if message.forward_origin is not None:
        origin = describe_origin(message.forward_origin)
        published = message.forward_origin.date.astimezone(dt.UTC).date()
    return await post_from_message(
        text,
        pictures=pictures,
        published=published,
        origin=origin,
        language=language,
        allow_private_urls=allow_private_urls,
    )


async def deliver_check(
    state: BotState,
    target: Message,
    text: str,
    user_id: int,
    request: Message | None = None,
    *,
    photos: Sequence[Message] = (),
    unasked: bool = False,
) -> None:
    """Check ``text`` of ``target`` for ``user_id``; answer in a reply to ``request`` (the
    message that asked: ``/check``, a mention), or to ``target`` itself. The pictures
    of ``photos`` (``target``, or an album's messages) are downloaded and checked with
    the text; a refused picture gets one sentence, and no check is stored.

    The reply starts as "checking…" with a Cancel button, is edited as the check goes,
    and ends as the verdict card. A repeat answered from the store gets the card at once.
    An ``unasked`` check (a group's auto-check) shows no progress and answers only a
    checkable claim or a scam: an opinion, a greeting or satire gets no reply, nor
    does a picture that cannot be read.
    """
    anchor = request or target
    chat_id = target.chat_id
    requester = Requester(PLATFORM, str(user_id), str(chat_id))
    reply: Message | None = None
    queued = False
    try:
        language = state.service.chat_setting(PLATFORM, str(chat_id), LANGUAGE_KEY, "")
        # before a link or a picture is fetched: a refusal costs nothing
        state.service.admit(requester)
        if photos and not unasked:  # downloading and reading pictures takes a moment
            with contextlib.suppress(TelegramError):
                await anchor.reply_chat_action(ChatAction.TYPING)
        pictures = await download_pictures(target.get_bot(), photos, state.images)
        post = await read_post(
            target,
            text,
            pictures=pictures,
            language=language,
            allow_private_urls=state.allow_private_urls,
        )
        handle = await state.service.submit(post, requester)
        if state.service.delivers_cards and not handle.done:
            # A worker runs the check and a deliver job posts the card, on whichever
            # replica is alive then; this one shows progress while it is.
            queued = True
            target: dict[str, Any] = {
                "chat_id": chat_id,
                "origin": post.origin,
                "published": post.published.isoformat() if post.published else "",
            }
            if unasked:
                target.update(reply_to=anchor.message_id, unasked=True)
            else:
                reply = await anchor.reply_html(
                    progress_html([]),
                    do_quote=True,
                    reply_markup=progress_keyboard(handle.check_id),
                )
                target["message_id"] = reply.message_id
            await state.service.expect_delivery(handle.check_id, PLATFORM, target)  # type: ignore[attr-defined]
            if reply is not None:
                progress = ProgressMessage(
                    reply, progress_keyboard(handle.check_id), state.settings.progress_interval_s
                )
                await progress.follow(until_settled(handle))
            if handle.cancelled:  # the requester pressed Cancel: no card comes
                raise asyncio.CancelledError
            return
        if not handle.done and not unasked:
            reply = await anchor.reply_html(
                progress_html([]),
                do_quote=True,
                reply_markup=progress_keyboard(handle.check_id),
            )
            progress = ProgressMessage(
                reply, progress_keyboard(handle.check_id), state.settings.progress_interval_s
            )
            await progress.follow(until_settled(handle))
        outcome = await handle.result()
        if unasked and outcome.report.verdict in QUIET_UNASKED:
            return
        card = verdict_card(outcome, origin=post.origin, published=post.published)
        await _show(
            anchor,
            reply,
            card_html(card),
            card_keyboard(card.check_id, report_url=state.report_url(card.check_id)),
        )
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():  # shutdown: the check goes back to the queue
            if not queued:  # queued, it goes on, and a deliver job posts its card
                await _say(anchor, reply, INTERRUPTED)
            raise
        await _say(anchor, reply, "The check was cancelled.")
    except (ZofiaError, TelegramError) as exc:
        if unasked and photos and isinstance(exc, InvalidPostError):
            log.info("unasked picture post in chat %s not checked: %s", chat_id, exc)
            return
        log.warning("check for chat %s failed: %s", chat_id, exc, exc_info=True)
        await _say(anchor, reply, error_sentence(exc))
    except Exception as exc:
        log.exception("check for chat %s failed", chat_id)
        await _say(anchor, reply, error_sentence(exc))


async def post_delivered(state: BotState, bot: Bot, claim: Claim, found: Outcome | str) -> None:
    """A deliver job's card: edit the "checking…" message it names into the verdict card
    (or the failure's sentence), or, for an unasked check, reply to the post. Editing
    to what the message already shows is not an error: a retried job may do it."""
    target = claim.target
    chat_id = int(target["chat_id"])
    if isinstance(found, str):
        if target.get("unasked"):
            return
        text, keyboard = quote_text(error_sentence(CheckFailedError(found))), None
    else:
        if target.get("unasked") and found.report.verdict in QUIET_UNASKED:
            return
        published = target.get("published") or ""
        card = verdict_card(
            found,
            origin=str(target.get("origin") or ""),
            published=dt.date.fromisoformat(published) if published else None,
        )
        text = card_html(card)
        keyboard = card_keyboard(card.check_id, report_url=state.report_url(card.check_id))
    if "message_id" not in target:
        await bot.send_message(
            chat_id,
            text,
            parse_mode="HTML",
            reply_markup=keyboard,
            link_preview_options=NO_PREVIEW,
            reply_parameters=ReplyParameters(
                int(target["reply_to"]), allow_sending_without_reply=True
            ),
        )
        return
    try:
        await bot.edit_message_text(
            text,
            chat_id=chat_id,
            message_id=int(target["message_id"]),
            parse_mode="HTML",
            reply_markup=keyboard,
            link_preview_options=NO_PREVIEW,
        )
    except BadRequest as exc:
        if "not modified" not in str(exc).lower():
            raise


class _Handle(Protocol):
    def events(self) -> AsyncIterator[ProgressEvent]: ...

    async def result(self) -> Outcome: ...


async def until_settled(handle: _Handle) -> AsyncIterator[ProgressEvent]:
    """``handle.events()``, ending when they end or when the handle's own outcome is
    settled, whichever comes first: a requester who cancelled stops following a run
    that goes on for others, and the progress message makes its last edit in order."""
    events = handle.events()
    settled = asyncio.ensure_future(_settled(handle))
    try:
        while True:
            step = asyncio.ensure_future(_next(events))
            try:
                await asyncio.wait([step, settled], return_when=asyncio.FIRST_COMPLETED)
            finally:
                if not step.done():  # settled first (or we are cancelled): stop the events
                    step.cancel()
                    await asyncio.wait([step])
            if step.cancelled():
                return
            try:
                event = step.result()
            except StopAsyncIteration:
                return
            yield event
    finally:
        settled.cancel()
        await asyncio.wait([settled])
        close = getattr(events, "aclose", None)
        if close is not None:  # a generator left at a yield: let it clean up now
            await close()


async def _next(events: AsyncIterator[ProgressEvent]) -> ProgressEvent:
    return await anext(events)


async def _settled(handle: _Handle) -> None:
    """Returns when the outcome is settled; what it is, :meth:`CheckHandle.result` says."""
    with contextlib.suppress(Exception):
        await handle.result()


async def _show(
    target: Message, reply: Message | None, text: str, keyboard: InlineKeyboardMarkup
) -> None:
    if reply is None:
        await target.reply_html(
            text, do_quote=True, reply_markup=keyboard, link_preview_options=NO_PREVIEW
        )
    else:
        await reply.edit_text(
            text, parse_mode="HTML", reply_markup=keyboard, link_preview_options=NO_PREVIEW
        )


async def _say(target: Message, reply: Message | None, sentence: str) -> None:
    """One sentence in place of the progress message (or in a reply); never raises."""
    try:
        if reply is None:
            await target.reply_html(quote_text(sentence), do_quote=True)
        else:
            await reply.edit_text(quote_text(sentence), parse_mode="HTML", reply_markup=None)
    except TelegramError as exc:
        log.warning("could not tell chat %s: %s", target.chat_id, exc)
