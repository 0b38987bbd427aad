"""One check per cooldown per chat: one rule for every platform.

A request claims its chat's cooldown in one step (:meth:`Cooldowns.claim` reads and
records it with no ``await`` between), so that requests handled at the same time cannot
all pass; a request refused before a check starts (an empty text, a limit) gives its
claim back. The same clock spaces out what the bot says unasked for: a fixed sentence
said at most once per cooldown, one refusal for a burst (:meth:`Cooldowns.once`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Cooldowns"]


class Cooldowns:
    """When each chat last started a check.

    Args:
        longest_s: the longest cooldown any chat can have; older claims are forgotten.
        clock: monotonic seconds (``time.monotonic``; tests pass their own).
    """

    def __init__(
        self, longest_s: float = 3600.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.longest_s = longest_s
        self._clock = clock
        self._last: dict[str, float] = {}

    def claim(self, chat: str, wait_s: float) -> tuple[float, float]:
        """Try to start a check in ``chat``, whose cooldown is ``wait_s`` seconds.

        Returns:
            ``(0.0, claim)`` when it may start now (the claim is recorded; hand it to
            :meth:`release` if no check starts after all), or ``(seconds left, 0.0)``.
        """
        now = self._clock()
        last = self._last.get(chat)
        if last is not None and last + wait_s > now:
            return last + wait_s - now, 0.0
        if len(self._last) > 1024:  # forget chats whose longest cooldown is over
            for key, at in list(self._last.items()):
                if at + self.longest_s <= now:
                    del self._last[key]
        self._last[chat] = now
        return 0.0, now

    def once(self, key: str, wait_s: float) -> bool:
        """Whether what ``key`` names (a chat's fixed sentence, a user's refusal) may be
        said now, at most once every ``wait_s`` seconds; if so, the time is recorded.
        Keys live beside the chats' check cooldowns: give them a form no chat id has
        (``"<chat> follow-up refusal <user>"``)."""
        left, _ = self.claim(key, wait_s)
        return left == 0.0

    def release(self, chat: str, claim: float) -> None:
        """Give back ``claim``: its request was refused before a check started. A later
        claim (a shorter cooldown let one through since) is kept."""
        if self._last.get(chat) == claim:
            del self._last[chat]

    def __len__(self) -> int:
        return len(self._last)
