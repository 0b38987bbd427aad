"""One check's conversation with the models: routing, budgets, parsing, accounting.

A :class:`CheckSession` is made per check. Every agent step goes through
:meth:`CheckSession.ask`, which sends the request to the role's backend,
records the call (tokens, cache hits, latency) whatever its outcome, reads
the JSON reply, and asks once for a repair when the reply does not parse.
A step that still fails raises :class:`StepFailed`, which the agents record
in the report instead of letting it end the check (:func:`answer_or_failed`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel

from ..errors import LLMBudgetExceededError, LLMConfigError, LLMError, ZofiaError
from ..prompting import render
from ..report import LLMCall
from .base import ChatMessage, Completion, CompletionRequest, LLMBackend
from .structured import ReplyParseError, json_schema, parse_reply

__all__ = ["Answer", "CheckSession", "Route", "StepFailed", "answer_or_failed"]

T = TypeVar("T", bound=BaseModel)
#: a report record of one step (it has ``status`` and ``error``)
R = TypeVar("R", bound=BaseModel)


@dataclass(frozen=True)
class Route:
    """Where a role's calls go. ``max_tokens`` 0 keeps each step's own cap."""

    backend: LLMBackend
    model: str
    max_tokens: int = 0


@dataclass(frozen=True)
class Answer(Generic[T]):
    """A parsed reply and the completion it came from (the repaired one, if repaired)."""

    value: T
    completion: Completion


class StepFailed(ZofiaError):
    """An agent step produced nothing usable; ``reason`` says why in words."""

    def __init__(self, step: str, reason: str) -> None:
        super().__init__(f"{step}: {reason}")
        self.step = step
        self.reason = reason


async def answer_or_failed(failed: R, asking: Awaitable[Answer[T]]) -> Answer[T] | R:
    """The step's answer; or, when the step fails, its record ``failed`` marked
    ``status="failed"`` with the reason as its ``error``, for the report to keep while
    the check goes on without the step."""
    try:
        return await asking
    except StepFailed as exc:
        return failed.model_copy(update={"status": "failed", "error": exc.reason})


class CheckSession:
    """The LLM side of one check.

    Args:
        routes: role name → where its calls go.
        temperature: sampling temperature for every call (the paper uses 0).
        max_calls: calls allowed in this check, repairs included.
        max_tokens: prompt plus completion tokens allowed in this check.
    """

    def __init__(
        self,
        routes: Mapping[str, Route],
        *,
        temperature: float = 0.0,
        max_calls: int = 60,
        max_tokens: int = 300_000,
    ) -> None:
        self.routes = dict(routes)
        self.temperature = temperature
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self.calls: list[LLMCall] = []

    @property
    def local(self) -> bool:
        """Whether every route's model runs on this machine (no quota, no money)."""
        return all(route.backend.local for route in self.routes.values())

    @property
    def tokens_used(self) -> int:
        return sum(c.prompt_tokens + c.completion_tokens for c in self.calls)

    def _check_budget(self, step: str) -> None:
        if len(self.calls) >= self.max_calls:
            raise LLMBudgetExceededError(step, f"call budget of {self.max_calls} spent")
        if self.tokens_used >= self.max_tokens:
            raise LLMBudgetExceededError(step, f"token budget of {self.max_tokens} spent")

    async def ask(
        self,
        role: str,
        step: str,
        messages: Sequence[ChatMessage],
        schema: type[T],
        *,
        max_tokens: int,
        enums: Mapping[str, Sequence[str] | Sequence[int]] | None = None,
        max_items: dict[str, int] | None = None,
        top_logprobs: int = 0,
    ) -> Answer[T]:
        """Ask ``role`` for a JSON reply that fits ``schema``.

        Args:
            role: the configured role (``linguist``, ``judge`` …).
            step: a name for this call in the report (``linguist:emotion``).
            messages: the conversation, shared material first.
            schema: the reply's model.
            max_tokens: this step's cap on reply length (a role setting overrides it).
            enums, max_items: narrow the schema, see :func:`json_schema`.
            top_logprobs: ask for token alternatives (for the judge's confidence).

        Raises:
            StepFailed: the call failed after retries, the budget is spent, or
                the reply did not parse even after one repair.
            LLMConfigError: the server refused the request as configured; the
                check cannot go on, so this is not a step's failure.
        """
        route = self.routes[role]
        spec = json_schema(schema, enums, max_items)
        request = CompletionRequest(
            messages=tuple(messages),
            model=route.model,
            schema=spec,
            schema_name=schema.__name__.lower(),
            max_tokens=route.max_tokens or max_tokens,
            temperature=self.temperature,
            top_logprobs=top_logprobs,
        )
        completion = await self._call(role, step, route, request)
        try:
            return Answer(parse_reply(completion.text, schema), completion)
        except ReplyParseError as exc:
            problem = str(exc)
        repair = render("repair", error=problem, schema=json.dumps(spec, separators=(",", ":")))
        retry = dataclasses.replace(
            request,
            messages=(
                *request.messages,
                ChatMessage("assistant", completion.text),
                ChatMessage("user", repair),
            ),
        )
        completion = await self._call(role, f"{step}:repair", route, retry)
        try:
            return Answer(parse_reply(completion.text, schema), completion)
        except ReplyParseError as exc:
            raise StepFailed(step, f"unusable reply after one repair: {exc}") from None

    async def _call(
        self, role: str, step: str, route: Route, request: CompletionRequest
    ) -> Completion:
        label = f"{route.backend.name}:{route.model}" if route.model else route.backend.name
        try:
            self._check_budget(step)
        except LLMBudgetExceededError as exc:
            raise StepFailed(step, exc.detail) from None
        started = time.perf_counter()
        try:
            completion = await route.backend.complete(request)
        except LLMConfigError as exc:  # a wrong setting: every later call would fail too
            self.calls.append(_failed(role, step, label, exc, started))
            raise
        except LLMError as exc:
            self.calls.append(_failed(role, step, label, exc, started))
            raise StepFailed(step, exc.detail) from exc
        self.calls.append(_record(role, step, label, completion))
        return completion


def _failed(role: str, step: str, label: str, exc: LLMError, started: float) -> LLMCall:
    return LLMCall(
        role=role,
        step=step,
        backend=label,
        ok=False,
        error=exc.detail,
        latency_ms=round((time.perf_counter() - started) * 1000, 2),
    )


def _record(role: str, step: str, label: str, c: Completion) -> LLMCall:
    return LLMCall(
        role=role,
        step=step,
        backend=label,
        ok=True,
        prompt_tokens=c.prompt_tokens,
        completion_tokens=c.completion_tokens,
        cached_tokens=c.cached_tokens,
        latency_ms=round(c.latency_ms, 2),
        attempts=c.attempts,
        usage_reported=c.usage_reported,
        prompt_ms=None if c.prompt_ms is None else round(c.prompt_ms, 2),
    )
