"""The rounds of a bot's corrections poll (:func:`bots.service.corrections.correcting`),
counted, so that a test can wait for "no more corrections come" deterministically.

Each round of the poll begins by asking the store for the checks due
(``store.shown_cards.due_checks``) and then corrects them, one chat after another,
awaiting each platform's send; the next round begins only once it is over.
:class:`PollRounds` wraps that one store call to count the rounds begun: once the count
is two past what it was at some point, a whole round ran after that point, so whatever
was due then has been sent, and a correction not sent by then never will be (short of
another change of a verdict).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from storage.store import CheckStore

__all__ = ["PollRounds"]


class PollRounds:
    """Counts the rounds of the corrections poll on ``store`` (every platform's, in
    the local mode), from now on."""

    def __init__(self, store: CheckStore) -> None:
        self.begun = 0
        self._lock = threading.Lock()  # the poll asks the store from a worker thread
        shown = store.shown_cards
        due_checks = shown.due_checks

        def counted(*args: Any, **kwargs: Any) -> list[str]:
            with self._lock:
                self.begun += 1
            return due_checks(*args, **kwargs)

        shown.due_checks = counted  # type: ignore[method-assign]

    async def passed(self, rounds: int = 1, *, timeout_s: float = 10.0) -> None:
        """Return once ``rounds`` whole rounds began and ended after this call (the round
        under way, if any, is not one of them); bounded by ``timeout_s``."""
        target = self.begun + rounds + 1
        async with asyncio.timeout(timeout_s):
            while self.begun < target:
                await asyncio.sleep(0.01)
