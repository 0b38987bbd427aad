"""Refusals to one chat, said once: a burst of posts that limits refuse gets one answer.

Thirty posts forwarded at once, of which the limits let five through, would otherwise
get twenty-five identical refusals, which the chat's pacer would send ahead of the five
cards. A chat's first refusal is held for ``window_s``, and then while checks of the chat
are still opening (up to ``hold_s``), so that their cards go first; then one message
says how many posts were not checked, which limit refused them (the first refusal's:
a rate, a share, the budget, the queue, the group's cooldown) and when to send them
again. Refusals that come while that message is recent (``keep_s``) edit its count
instead of adding a message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from telegram import Message
from telegram.error import TelegramError

from bots.render.sentences import refusals_sentence
from bots.render.words import ENGLISH, Words

from .render import quote_text

__all__ = ["Refusals"]

log = logging.getLogger(__name__)


@dataclass
class _Held:
    """The refusals of one chat since its answer was opened."""

    anchor: Message  # the first refused request: the answer replies to it
    single: str  # what one refusal alone is told
    reason: str  # which limit refused it, for the answer to many
    words: Words  # the chat's language, for the answer to many
    count: int = 0  # requests refused
    said: int = 0  # requests the answer counts so far
    retry_at: float = 0.0  # when every refused post may be sent again
    last: float = 0.0  # when the last refusal came
    answer: Message | None = None  # the answer, once sent
    flushing: bool = False  # a refusal is waiting to say it


class _Opening:
    """The checks of one chat still opening, and an event set once none is left."""

    def __init__(self) -> None:
        self.count = 0
        self.done = asyncio.Event()


class Refusals:
    """The refusals held per chat, and the checks of each chat still opening.

    Args:
        window_s: how long a refusal waits for others of the same burst.
        hold_s: how much longer it waits, at most, for the chat's cards to go first.
        keep_s: how long an answer is edited by later refusals rather than followed.
    """

    def __init__(self, *, window_s: float = 1.5, hold_s: float = 20.0, keep_s: float = 60.0):
        self.window_s = window_s
        self.hold_s = hold_s
        self.keep_s = keep_s
        self._held: dict[int, _Held] = {}
        self._opening: dict[int, _Opening] = {}

    def opening(self, chat_id: int) -> Callable[[], None]:
        """Count a check of ``chat_id`` as opening until the returned call (made once its
        card or sentence is shown; later calls do nothing)."""
        opening = self._opening.setdefault(chat_id, _Opening())
        opening.count += 1
        done = False

        def opened() -> None:
            nonlocal done
            if done:
                return
            done = True
            opening.count -= 1
            if opening.count <= 0:
                opening.done.set()  # wakes the refusals waiting for the chat's cards
                if self._opening.get(chat_id) is opening:
                    del self._opening[chat_id]

        return opened

    async def refuse(
        self,
        anchor: Message,
        sentence: str,
        retry_after_s: float,
        words: Words = ENGLISH,
        *,
        reason: str = "",
    ) -> None:
        """Count a refusal of ``anchor``'s request; the first of a burst says them all.

        Args:
            sentence: what this refusal is told when no other comes with it.
            retry_after_s: when the refused post may be sent again.
            words: the chat's language (the first refusal's), for the answer to many.
            reason: which limit refused it, in one sentence (the first refusal's is the
                burst's: :func:`~bots.render.sentences.refusal_reason`).
        """
        loop = asyncio.get_running_loop()
        now = loop.time()
        chat = anchor.chat_id
        held = self._held.get(chat)
        if held is None or now - held.last > self.keep_s:
            self._forget(now)
            held = self._held[chat] = _Held(anchor, sentence, reason, words)
        held.count += 1
        held.last = now
        held.retry_at = max(held.retry_at, now + retry_after_s)
        if held.flushing:
            return
        held.flushing = True
        try:
            await asyncio.sleep(self.window_s)
            await self._opened(chat, loop.time() + self.hold_s)
            await self._answer(held, loop.time())
        finally:
            held.flushing = False

    async def _opened(self, chat: int, deadline: float) -> None:
        """Wait until no check of ``chat`` is opening (one that opens meanwhile is waited
        for too), or until ``deadline`` (the loop's time)."""
        loop = asyncio.get_running_loop()
        while (opening := self._opening.get(chat)) is not None:
            left = deadline - loop.time()
            if left <= 0:
                return
            try:
                async with asyncio.timeout(left):
                    await opening.done.wait()
            except TimeoutError:
                return

    async def _answer(self, held: _Held, now: float) -> None:
        count = held.count
        if count == held.said:
            return
        if count == 1:
            text = held.single
        else:
            text = refusals_sentence(count, held.reason, held.retry_at - now, held.words)
        try:
            if held.answer is None:
                held.answer = await held.anchor.reply_html(quote_text(text), do_quote=True)
            else:
                await held.answer.edit_text(quote_text(text), parse_mode="HTML")
        except TelegramError as exc:
            log.warning("could not tell a chat of its refusals: %s", exc)
        held.said = count

    def _forget(self, now: float) -> None:
        """Forget the answers too old to be edited, once many chats are held."""
        if len(self._held) < 256:
            return
        for chat, held in list(self._held.items()):
            if not held.flushing and now - held.last > self.keep_s:
                del self._held[chat]
