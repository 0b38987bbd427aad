"""The "checking…" message, edited as progress events arrive.

Edits go out one at a time, at most one every ``interval_s``, each showing the latest
state: events that arrive while an edit is on its way are folded into the next one,
so a slow chat never falls behind and edits never overtake each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from telegram import InlineKeyboardMarkup, Message
from telegram.error import TelegramError

from bots.common.progress import progress_lines
from zofia_engine.post import ProgressEvent

from .render import progress_html

__all__ = ["ProgressMessage"]

log = logging.getLogger(__name__)


class ProgressMessage:
    """Keeps ``message`` showing the progress of a check.

    Args:
        message: the bot's "checking…" message.
        keyboard: the buttons it keeps (Cancel).
        interval_s: the least time between two edits.
    """

    def __init__(self, message: Message, keyboard: InlineKeyboardMarkup, interval_s: float) -> None:
        self.message = message
        self.keyboard = keyboard
        self.interval_s = interval_s
        self.events: list[ProgressEvent] = []
        self.shown = message.text_html or ""
        self._changed = asyncio.Event()
        self._closing = asyncio.Event()

    async def follow(self, events: AsyncIterator[ProgressEvent]) -> None:
        """Show ``events`` until they end; the last edit is done when this returns."""
        editor = asyncio.get_running_loop().create_task(self._edit_loop())
        try:
            async for event in events:
                self.events.append(event)
                self._changed.set()
        finally:
            self._closing.set()
            self._changed.set()
            await editor

    async def _edit_loop(self) -> None:
        while True:
            await self._changed.wait()
            if self._closing.is_set():
                return
            self._changed.clear()
            text = progress_html(progress_lines(self.events))
            if text != self.shown:
                await self._edit(text)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.interval_s):
                    await self._closing.wait()

    async def _edit(self, text: str) -> None:
        try:
            await self.message.edit_text(text, parse_mode="HTML", reply_markup=self.keyboard)
        except TelegramError as exc:  # progress is a courtesy: a failed edit never stops a check
            log.warning("progress edit failed: %s", exc)
        else:
            self.shown = text
