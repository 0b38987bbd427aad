"""One check of a WhatsApp message: "checking…" at once, then the card.

:func:`check_inbound` hands a text, a link or a picture (with or without its caption) to
the common check flow (:func:`bots.chat.check_flow.run_check`) with a
:class:`WhatsAppScreen`. WhatsApp cannot edit a message, so the screen shows no running
progress: one "checking…" reply to the user's message when the check starts, then the
card as a new message (:func:`~.cards.send_card`); a verdict the evidence fixed
before the debate comes first as the early card, and the completed card follows.
A picture or a voice note is found through the Cloud API once the request is admitted,
refused from its declared size before it is downloaded; one that cannot be downloaded is
said in one sentence, in the chat's language.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import aiohttp

from bots.chat.check_flow import CheckRequest, card_target, run_check
from bots.render.card import VerdictCard
from bots.render.sentences import error_sentence, waiting_sentence
from bots.render.words import N_, Words, words_for
from bots.service.audio import PostAudio
from bots.service.audio import refuse_declared as refuse_audio
from bots.service.images import refuse_declared
from bots.service.records import Fetched, Message
from bots.service.refusals import RateLimitedError
from zofia_engine.errors import InvalidPostError

from .cards import send_card
from .cloud import GraphError
from .context import WhatsAppContext
from .inbound import Inbound
from .render import checking_text

__all__ = [
    "NOT_DOWNLOADED",
    "VOICE_NOT_DOWNLOADED",
    "WhatsAppScreen",
    "check_inbound",
    "delivery_target",
]

log = logging.getLogger(__name__)

NOT_DOWNLOADED = N_("I could not download the picture from WhatsApp; please send it again.")
VOICE_NOT_DOWNLOADED = N_(
    "I could not download the voice note from WhatsApp; please send it again."
)


class WhatsAppScreen:
    """A check shown in a user's chat: replies to their message, each a new one.

    Args:
        ctx: the tipline's context.
        inbound: the user's message.
        words: the chat's language, for what the screen says itself.
    """

    platform_errors: ClassVar[tuple[type[Exception], ...]] = (GraphError, aiohttp.ClientError)

    def __init__(self, ctx: WhatsAppContext, inbound: Inbound, words: Words) -> None:
        self.ctx = ctx
        self.inbound = inbound
        self.words = words

    async def open_progress(self, check_id: str) -> None:
        """The "checking…" reply, at once."""
        await self._say(checking_text(self.words))

    async def show_progress(self, lines: list[str]) -> bool:
        return False  # a sent message cannot be edited: "checking…" stands until the card

    async def show_waiting(self, ahead: int) -> None:
        await self._say(waiting_sentence(ahead, self.words))

    async def show_card(self, card: VerdictCard) -> None:
        await send_card(self.ctx, self.inbound.sender, card, reply_to=self.inbound.id)

    async def say(self, sentence: str) -> None:
        await self._say(sentence, fail=True)

    async def refuse(self, exc: RateLimitedError) -> None:
        await self.say(error_sentence(exc, self.words))

    def delivery_target(self, request: CheckRequest, checks_left: int | None) -> dict[str, Any]:
        return delivery_target(self.inbound, card_target(request.message, checks_left))

    async def _say(self, text: str, *, fail: bool = False) -> None:
        """Send ``text`` as a reply; a courtesy (``fail`` false) never raises."""
        try:
            await self.ctx.outbox.text(self.inbound.sender, text, reply_to=self.inbound.id)
        except (GraphError, aiohttp.ClientError) as exc:
            if fail:
                raise
            log.warning(
                "could not reply in chat %s: %s", self.ctx.log_chat(self.inbound.sender), exc
            )


def delivery_target(inbound: Inbound, card: dict[str, Any]) -> dict[str, Any]:
    """Where a deliver job sends the card (sealed at rest): the user and the message
    it answers, with what the card is made from."""
    return {"to": inbound.sender, "reply_to": inbound.id, **card}


def _fetch(
    ctx: WhatsAppContext, inbound: Inbound, words: Words
) -> Callable[[], Awaitable[Fetched]]:
    """The picture's or the voice note's download, once the request is admitted: refused
    from its declared size first; a failed download said in ``words``."""
    media_id, audio = inbound.media_id, inbound.kind == "audio"

    async def fetch() -> Fetched:
        cloud = ctx.outbox.cloud
        try:
            media = await cloud.media(media_id)
            if audio:  # WhatsApp declares a voice note's size, not its length
                refuse_audio(media.size, None, ctx.audio)
            else:
                refuse_declared([media.size], ctx.images)
            data = await cloud.download(media)
        except (GraphError, aiohttp.ClientError) as exc:
            log.warning("could not download media: %s", exc)
            raise InvalidPostError(
                words(VOICE_NOT_DOWNLOADED if audio else NOT_DOWNLOADED)
            ) from None
        if audio:
            return Fetched(audio=PostAudio(data=data, media_type=media.mime_type))
        return Fetched(images=((data, media.mime_type),))

    return fetch


async def check_inbound(ctx: WhatsAppContext, inbound: Inbound, language: str) -> None:
    """Check the text or picture of ``inbound`` and answer in its chat."""
    words = words_for(language)
    origin = words("a forwarded message") if inbound.forwarded else ""
    message = Message(
        inbound.text,
        fetch=_fetch(ctx, inbound, words) if inbound.media_id else None,
        origin=origin,
        language=language,
    )
    with ctx.turns.place(inbound.sender) as ticket:
        request = CheckRequest(
            message,
            ctx.requester(inbound.sender),
            has_media=bool(inbound.media_id),
            ticket=ticket,
        )
        screen = WhatsAppScreen(ctx, inbound, words)
        await run_check(ctx.service, request, screen, progress_interval_s=1.0)
