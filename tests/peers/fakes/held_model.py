"""A slow model at our own LLM port: every call waits until the test lets the model go,
then is answered by the panel's script (:class:`~tests.peers.fakes.panel_script.ScriptedPanel`).

Behind :func:`zofia_engine.llm.scripted.scripted` it stands in for the configured model
servers (``LLMRouter(backends=...)``), so that a whole check runs through the real
engine and stays in progress, at its first model call, for exactly as long as a test
needs (a shutdown in the middle of a check), however fast or slow the machine. It proves
what the bots and the service do around a check in progress, not any model's answer.
"""

from __future__ import annotations

import asyncio

from zofia_engine.llm.base import Completion, CompletionRequest

from .panel_script import PanelScript, ScriptedPanel

__all__ = ["HeldModel"]


class HeldModel:
    """A :data:`~zofia_engine.llm.scripted.Handler` that holds each call until
    :meth:`let_go`.

    Attributes:
        calls: the calls that arrived (held or answered).
        answered: the calls answered.
    """

    def __init__(self, script: PanelScript | None = None) -> None:
        self.panel = ScriptedPanel(script or PanelScript())
        self.calls = 0
        self.answered = 0
        self._arrived = asyncio.Event()
        self._go = asyncio.Event()

    async def __call__(self, request: CompletionRequest) -> Completion:
        self.calls += 1
        self._arrived.set()
        await self._go.wait()
        self.answered += 1
        return self.panel(request)

    async def holding(self, timeout_s: float = 60.0) -> None:
        """Return once a call is held (the check is in progress); raise ``TimeoutError``
        after ``timeout_s`` (only a broken bot takes that long: the test fails, not hangs)."""
        async with asyncio.timeout(timeout_s):
            await self._arrived.wait()

    def let_go(self) -> None:
        """Answer the calls held, and every later one at once."""
        self._go.set()
