"""An in-process backend whose replies a function chooses, for tests and benchmarks.

As httpx's ``MockTransport`` stands in for the network at the transport, a
:class:`ScriptedBackend` stands in for a model at :meth:`LLMBackend.complete`: the
engine's own logic (what it asks, what it does with each reply) runs in full, with
no server. It proves that logic, not the behaviour of any model, nor the protocol of
a server (the loopback fake and the real llama.cpp server test those).

    def answer(request: CompletionRequest) -> str:
        return '{"verdict": "false", "reason": "..."}'

    engine = Engine(settings, llm=LLMRouter(settings.llm, backends=scripted(answer)))
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeAlias

from ..config import ROLES
from .base import Completion, CompletionRequest, LLMBackend

__all__ = ["Handler", "ScriptedBackend", "scripted"]

#: Gives the reply to a request: its text, or the whole completion (token counts,
#: log-probabilities, finish reason); may be a coroutine function, and may raise the
#: backend's errors (``LLMResponseError`` …) to stand for a failing model.
Handler: TypeAlias = Callable[[CompletionRequest], "str | Completion | Awaitable[str | Completion]"]


class ScriptedBackend(LLMBackend):
    """Answers each request with what ``handler`` returns; keeps every request.

    A reply given as text counts its tokens as words (the prompt's: the words of its
    messages), reports no cached tokens and no log-probabilities.
    """

    name = "scripted"
    structured = True

    def __init__(self, handler: Handler, *, local: bool = False) -> None:
        self.handler = handler
        self.local = local
        self.requests: list[CompletionRequest] = []

    async def complete(self, request: CompletionRequest) -> Completion:
        self.requests.append(request)
        started = time.perf_counter()
        reply = self.handler(request)
        if inspect.isawaitable(reply):
            reply = await reply
        if isinstance(reply, Completion):
            return reply
        prompt = sum(len(m.content.split()) for m in request.messages)
        return Completion(
            text=reply,
            model=request.model or self.name,
            prompt_tokens=prompt,
            completion_tokens=len(reply.split()),
            latency_ms=(time.perf_counter() - started) * 1000,
            finish_reason="stop",
        )


def scripted(handler: Handler, *, local: bool = False) -> dict[str, LLMBackend]:
    """One :class:`ScriptedBackend` for every role, as ``LLMRouter(backends=...)`` takes
    it."""
    backend = ScriptedBackend(handler, local=local)
    return dict.fromkeys(ROLES, backend)
