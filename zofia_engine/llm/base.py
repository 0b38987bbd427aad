"""The LLM seam: one async method, a request in, a completion with its usage out.

Backends (OpenAI-compatible servers, the embedded llama.cpp model, test fakes)
implement :class:`LLMBackend`. They do transport only: retries, rate and
concurrency limits, token accounting. Parsing, repair and budgets live one
layer up in :mod:`zofia_engine.llm.session`.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "ChatMessage",
    "Completion",
    "CompletionRequest",
    "LLMBackend",
    "TokenLogprob",
]


@dataclass(frozen=True)
class ChatMessage:
    """One chat turn, as in the OpenAI chat format. ``images`` are ``data:`` URLs sent
    after the text as image content parts (only to a vision model)."""

    role: Literal["system", "user", "assistant"]
    content: str
    images: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompletionRequest:
    """What to ask the model.

    Args:
        messages: the conversation; shared material first, the role's task last.
        model: the model name the server knows (ignored by the embedded backend).
        schema: a JSON schema the reply must follow, or ``None`` for free text.
        schema_name: a short name for the schema (OpenAI wants one).
        max_tokens: cap on completion tokens.
        temperature: sampling temperature; the paper uses 0.
        top_logprobs: ask for this many alternatives per generated token (0: none).
    """

    messages: Sequence[ChatMessage]
    model: str = ""
    schema: dict[str, Any] | None = None
    schema_name: str = "reply"
    max_tokens: int = 512
    temperature: float = 0.0
    top_logprobs: int = 0


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token, its log-probability and the top alternatives."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Completion:
    """The model's reply and exactly what it cost.

    ``prompt_tokens`` and ``completion_tokens`` come from the server's usage
    fields when it sends them. ``cached_tokens`` is the part of the prompt the
    server did not have to evaluate (prefix cache / KV reuse), ``None`` when
    the server does not say. ``usage_reported`` is false when the server sent
    no usage and the counts are estimates. ``latency_ms`` covers every attempt;
    ``prompt_ms`` is the part of it before the first token was sampled (reading the
    prompt), when the backend can tell (the embedded one can).
    """

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    cached_tokens: int | None = None
    finish_reason: str = ""
    logprobs: tuple[TokenLogprob, ...] | None = None
    usage_reported: bool = True
    attempts: int = 1
    prompt_ms: float | None = None

    @property
    def evaluated_prompt_tokens(self) -> int | None:
        """Prompt tokens the model actually had to run, when the server says."""
        if self.cached_tokens is None:
            return None
        return self.prompt_tokens - self.cached_tokens


class LLMBackend(abc.ABC):
    """A chat-completion backend.

    ``name`` appears in reports and errors (``openai``, ``embedded``).
    ``structured`` says whether ``schema`` is enforced by the server (a
    grammar or ``response_format``); when it is not, the session parses
    tolerantly and asks once for a repair.
    ``local`` says whether calls run on this machine: one that turns out not to be
    needed costs time on idle cores, not money or a quota.
    """

    name: str = "llm"
    structured: bool = True
    local: bool = False

    @abc.abstractmethod
    async def complete(self, request: CompletionRequest) -> Completion:
        """Run one chat completion.

        Raises:
            LLMRateLimitedError, LLMTimeoutError, LLMResponseError: after the
                backend's own retries are spent.
        """

    def load(self) -> None:  # noqa: B027 - optional hook
        """Load weights or open connections now (blocking); the default does nothing."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections and memory; the default does nothing."""
