"""A private chat's requests answered in turn, in the order they came.

People forward several posts at once. The limits admit up to ``private_queue`` of them
beyond the one being answered (:mod:`bots.service.limits`); :class:`Turns` holds the others
in line, per user, so that each is answered in turn, and says how many are ahead of
each one. A request takes its place in line (:meth:`Turns.place`) the moment it comes,
before any ``await``, so that the line keeps the order of arrival, and gives it up as
soon as its answer is known (:func:`~.check_flow.run_check` does, before a refusal is
said), or else when the block that took it ends, however it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Iterator

__all__ = ["Ticket", "Turns"]


class Ticket:
    """One request's place in its line; :meth:`leave` once it is answered (or refused)."""

    def __init__(self, turns: Turns, key: str) -> None:
        self._turns = turns
        self.key = key
        self._ready = asyncio.Event()
        self._left = False

    @property
    def ahead(self) -> int:
        """How many requests are answered before this one starts (``0``: its turn)."""
        return self._turns.ahead(self)

    async def ready(self) -> None:
        """Wait for this request's turn."""
        await self._ready.wait()

    def go(self) -> None:
        """Its turn has come (its line's)."""
        self._ready.set()

    def leave(self) -> None:
        """Give up the place: the next in line may start. Later calls do nothing."""
        if not self._left:
            self._left = True
            self._turns.leave(self)


class Turns:
    """Lines of requests, one per key (a user), at most ``size`` of each answered at once.

    Args:
        size: how many of one line are answered at once (``private_in_flight``).
    """

    def __init__(self, size: int = 1) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, not {size}")
        self.size = size
        self._lines: dict[str, deque[Ticket]] = {}

    def join(self, key: str) -> Ticket:
        """A place at the end of the line of ``key``; ready at once when it is short.
        Give it up with :meth:`Ticket.leave`, or take it with :meth:`place`."""
        ticket = Ticket(self, key)
        line = self._lines.setdefault(key, deque())
        line.append(ticket)
        self._wake(line)
        return ticket

    @contextlib.contextmanager
    def place(self, key: str | None) -> Iterator[Ticket | None]:
        """A place in the line of ``key`` for the block, given up when it ends (if it was
        not before); ``None`` when ``key`` is (a request outside a private chat waits
        for no one)."""
        if key is None:
            yield None
            return
        ticket = self.join(key)
        try:
            yield ticket
        finally:
            ticket.leave()

    def ahead(self, ticket: Ticket) -> int:
        line = self._lines.get(ticket.key)
        if line is None or ticket not in line:
            return 0
        return max(0, line.index(ticket) - self.size + 1)

    def waiting(self, key: str) -> int:
        """How many requests of ``key`` wait for their turn."""
        return max(0, len(self._lines.get(key, ())) - self.size)

    def leave(self, ticket: Ticket) -> None:
        line = self._lines.get(ticket.key)
        if line is None or ticket not in line:
            return
        line.remove(ticket)
        if line:
            self._wake(line)
        else:
            del self._lines[ticket.key]

    def _wake(self, line: deque[Ticket]) -> None:
        for n, ticket in enumerate(line):
            if n >= self.size:
                return
            ticket.go()
