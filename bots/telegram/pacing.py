"""The bot's outgoing requests, paced per private chat, the verdict card first.

:class:`ChatPacedRateLimiter` is python-telegram-bot's limiter (30 messages a second,
20 a minute per group, retries after a 429) plus Telegram's advice for private chats:
about one message a second, in short bursts. A private chat's requests wait in one
queue, and when its turn comes the most useful goes first: a verdict card (sent, or
edited in place of "checking…"), then everything else (refusals, "checking…", a
sentence), then progress edits. A progress edit still waiting when a newer edit of the
same message is queued (a later state, or the card itself) is stale: it is dropped,
never sent. A request already on its way is answered before its caller's cancellation
goes through, so whatever the caller sends next cannot overtake it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from telegram.ext import AIORateLimiter

from .render import BUTTON_ACTIONS

__all__ = ["CARD", "OTHER", "PROGRESS", "ChatPacedRateLimiter", "priority_of"]

Result = bool | dict[str, Any] | list[dict[str, Any]]

#: a request's place in its chat's queue: lower goes first
CARD, OTHER, PROGRESS = 0, 1, 2
_CANCEL = {letter for letter, action in BUTTON_ACTIONS.items() if action == "cancel"}
_FORGET_AFTER = 1024  # chats kept before the idle ones are forgotten


def _button_letters(markup: Any) -> list[str]:
    """The callback actions' letters of an inline keyboard (an ``InlineKeyboardMarkup``,
    or its JSON form passed through ``api_kwargs``); none for another markup."""
    rows = getattr(markup, "inline_keyboard", None)
    if rows is None and isinstance(markup, dict):
        rows = markup.get("inline_keyboard")
    letters = []
    for row in rows or ():
        for button in row:
            data = getattr(button, "callback_data", None)
            if data is None and isinstance(button, dict):
                data = button.get("callback_data")
            if isinstance(data, str) and data[1:2] == ":":
                letters.append(data[0])
    return letters


def priority_of(endpoint: str, data: dict[str, Any]) -> int:
    """Where a request goes in its chat's queue: :data:`CARD` for a message with a verdict
    card's buttons (Debate, Evidence, …), :data:`PROGRESS` for an edit whose only
    buttons are "checking…"'s Cancel, :data:`OTHER` for the rest (a refusal, "checking…"
    itself, a sentence in place of the progress)."""
    letters = _button_letters(data.get("reply_markup"))
    if any(letter in BUTTON_ACTIONS and letter not in _CANCEL for letter in letters):
        return CARD
    if endpoint == "editMessageText" and letters and all(x in _CANCEL for x in letters):
        return PROGRESS
    return OTHER


def _message_of(endpoint: str, data: dict[str, Any]) -> int | None:
    """The message a text edit replaces, ``None`` for any other request."""
    message_id = data.get("message_id")
    if endpoint == "editMessageText" and isinstance(message_id, int):
        return message_id
    return None


@dataclass(eq=False)
class _Ticket:
    """One request in its chat's queue."""

    priority: int
    order: int  # first come, first served among equals
    message: int | None  # the message a text edit replaces
    dropped: bool = False  # a newer edit of the same message made it stale
    taken: bool = False  # its turn came: it is on its way

    @property
    def card_edit(self) -> bool:
        return self.message is not None and self.priority == CARD


@dataclass(eq=False)
class _ChatQueue:
    """One private chat's requests: a token bucket (``burst`` at once, ``rate`` a second)
    and the requests waiting for a token, best first."""

    burst: int
    rate: float
    level: float = 0.0  # tokens in use
    at: float = 0.0  # the loop's time when ``level`` was last leaked
    waiting: list[_Ticket] = field(default_factory=list)
    #: messages with an edit on its way: the next edit of each waits for its answer
    sending: Counter[int] = field(default_factory=Counter)
    #: messages whose card is waiting or on its way: a progress edit of one is stale
    carding: Counter[int] = field(default_factory=Counter)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def _leak(self, now: float) -> None:
        self.level = max(0.0, self.level - (now - self.at) * self.rate)
        self.at = now

    def idle(self, now: float) -> bool:
        self._leak(now)
        return not self.waiting and not self.sending and self.level == 0.0

    def _notify(self) -> None:
        """Wake every waiter to look again (the queue, or what is on its way, changed)."""
        self.changed.set()
        self.changed = asyncio.Event()

    def _next(self) -> _Ticket | None:
        """The best waiting request that may go now (an edit waits while another edit of
        its message is on its way)."""
        ready = [t for t in self.waiting if t.message is None or not self.sending[t.message]]
        return min(ready, key=lambda t: (t.priority, t.order), default=None)

    def add(self, ticket: _Ticket) -> None:
        """Queue ``ticket``. A text edit drops the progress edits of its message still
        waiting (a newer state, or the card, made them stale); a progress edit of a
        message whose card is waiting or on its way is dropped at once."""
        message = ticket.message
        if message is not None and ticket.priority == PROGRESS and self.carding[message]:
            ticket.dropped = True
            return
        if message is not None:
            for stale in [t for t in self.waiting if t.message == message]:
                if stale.priority == PROGRESS:
                    stale.dropped = True
                    self.waiting.remove(stale)
        if message is not None and ticket.card_edit:
            self.carding[message] += 1
        self.waiting.append(ticket)
        self._notify()

    async def turn(self, ticket: _Ticket) -> bool:
        """Wait until ``ticket`` may be sent and take its token; ``False`` once it was
        dropped."""
        loop = asyncio.get_running_loop()
        while not ticket.dropped:
            wait: float | None = None  # not first: until the queue changes
            if self._next() is ticket:
                self._leak(loop.time())
                wait = (self.level + 1 - self.burst) / self.rate
                if wait <= 0:
                    self.level += 1
                    self.waiting.remove(ticket)
                    ticket.taken = True
                    if ticket.message is not None:
                        self.sending[ticket.message] += 1
                    self._notify()
                    return True
            changed = self.changed
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await changed.wait()
        return False

    def done(self, ticket: _Ticket) -> None:
        """``ticket`` is answered, failed, dropped or cancelled while it waited (then its
        request is never sent): the next edit of its message may go."""
        message = ticket.message
        if ticket in self.waiting:
            self.waiting.remove(ticket)
        if message is not None and ticket.taken:
            self.sending[message] -= 1
            if self.sending[message] <= 0:
                del self.sending[message]
        if message is not None and ticket.card_edit:
            self.carding[message] -= 1
            if self.carding[message] <= 0:
                del self.carding[message]
        self._notify()


async def _to_the_end(
    callback: Callable[..., Coroutine[Any, Any, Result]], *args: Any, **kwargs: Any
) -> Result:
    """``callback``'s request, answered before a cancellation of its caller goes through:
    a request on its way may reach Telegram anyway, so the caller's next request (a
    card after a progress edit) must not be sent before it is answered."""
    request = asyncio.ensure_future(callback(*args, **kwargs))
    try:
        return await asyncio.shield(request)
    except asyncio.CancelledError:
        request.add_done_callback(lambda done: done.cancelled() or done.exception())  # seen
        await asyncio.wait({request})
        raise


class ChatPacedRateLimiter(AIORateLimiter):
    """PTB's limiter (30 messages a second, 20 a minute per group, retries after a 429)
    plus Telegram's advice for private chats: about one message a second, short bursts,
    each chat's queue ordered by :func:`priority_of` (the card first, progress edits
    last, a stale progress edit dropped).

    Args:
        chat_burst: messages a private chat may get at once; ``0`` turns pacing off.
        chat_rate: messages a second a private chat gets in the long run.
        max_retries: how often a request refused with 429 is tried again.
        group_max_rate: messages a minute a group gets (Telegram's 20, PTB's default);
            ``0`` turns the group limit off (a test that is not about it).
    """

    def __init__(
        self,
        *,
        chat_burst: int = 3,
        chat_rate: float = 1.0,
        max_retries: int = 3,
        group_max_rate: int = 20,
    ):
        if chat_burst and chat_rate <= 0:
            raise ValueError("chat_rate must be positive when chat_burst paces private chats")
        super().__init__(max_retries=max_retries, group_max_rate=group_max_rate)
        self._chat_burst = chat_burst
        self._chat_rate = chat_rate
        self._chats: dict[int, _ChatQueue] = {}
        self._order = itertools.count()

    def next_turn(self, chat_id: int) -> None:
        """The private chat's next turn comes now, as if the time for one message had
        passed: one more of its requests may go (the best waiting). For a caller that
        gives the turns itself, with a ``chat_rate`` so slow that none comes by the clock
        (a test of the queue's order).

        Raises:
            KeyError: the chat has sent nothing through this limiter yet.
        """
        queue = self._chats[chat_id]
        queue.level = max(0.0, queue.level - 1)
        queue._notify()

    def unpaced(self) -> None:
        """From now on every private chat's requests go at once, those waiting too."""
        self._chat_rate = 1e9
        for queue in self._chats.values():
            queue.rate = 1e9
            queue._notify()

    def _chat_queue(self, chat_id: int) -> _ChatQueue:
        if len(self._chats) > _FORGET_AFTER:  # forget the chats with nothing left to pace
            now = asyncio.get_running_loop().time()
            for key, queue in list(self._chats.items()):
                if queue.idle(now):
                    del self._chats[key]
        if chat_id not in self._chats:
            now = asyncio.get_running_loop().time()
            self._chats[chat_id] = _ChatQueue(self._chat_burst, self._chat_rate, at=now)
        return self._chats[chat_id]

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, Result]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> Result:
        """Send the request when its private chat's turn and pace allow (a group's, or
        any other, at once: PTB's limits apply to all). A progress edit dropped as stale
        is answered ``True`` (the edit methods then return ``True``, as for an edit of
        an inline message), never sent."""

        async def send(*call_args: Any, **call_kwargs: Any) -> Result:
            return await _to_the_end(callback, *call_args, **call_kwargs)

        chat_id = data.get("chat_id")
        if not (self._chat_burst and isinstance(chat_id, int) and chat_id > 0):
            return await super().process_request(
                send, args, kwargs, endpoint, data, rate_limit_args
            )
        queue = self._chat_queue(chat_id)
        ticket = _Ticket(
            priority_of(endpoint, data), next(self._order), _message_of(endpoint, data)
        )
        queue.add(ticket)
        try:
            if not await queue.turn(ticket):
                return True
            return await super().process_request(
                send, args, kwargs, endpoint, data, rate_limit_args
            )
        finally:
            queue.done(ticket)
