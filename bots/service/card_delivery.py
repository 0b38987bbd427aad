"""What the check service consults when checks run on worker processes.

In the default mode :class:`~bots.service.checks.CheckService` runs the engine in its own
process and the bot that asked posts the card. Given a :class:`CardDelivery` (the
job queue's :class:`~bots.service.queue.service.QueuedDelivery`), the service instead
queues each new check for the workers, follows its run through the events they
publish, and leaves the card to a ``deliver`` job that any bot replica may run: the
handles it returns say so (:attr:`~bots.service.handles.CheckHandle.delivered_elsewhere`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Protocol

from .handles import Run

__all__ = ["CardDelivery"]


class CardDelivery(Protocol):
    """Checks run elsewhere, and their cards posted by whichever replica is alive."""

    async def start(self) -> None:
        """Get ready (the queue's schema) and begin following the workers' events."""

    async def aclose(self) -> None:
        """Stop following events; checks go on elsewhere and their cards are delivered."""

    def forget_stale(self, now: dt.datetime) -> None:
        """Blank the chat ids of deliveries that never happened and are long overdue."""

    def pending(self) -> int:
        """How many checks wait for or hold an engine run (the deployment's bound)."""

    def queue(self, check_id: str, text_key: str | None) -> None:
        """Queue ``check_id`` for a worker, in the caller's write transaction; at most one
        job waits per ``text_key`` (``None``: no such bound, a forced recheck)."""

    def run_of(self, check_id: str, created_at: dt.datetime) -> Run:
        """The local run that settles when ``check_id`` ends elsewhere."""

    def settle_soon(self, check_id: str) -> None:
        """Look up soon whether ``check_id`` has ended already, and settle its run."""

    def drop(self, check_id: str) -> None:
        """Nobody waits for ``check_id``'s card any more."""

    async def expect(self, check_id: str, platform: str, target: dict[str, Any]) -> None:
        """Have ``check_id``'s card posted at ``target`` (the platform's ids)."""
