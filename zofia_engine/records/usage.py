"""What a check's model calls cost: each call, and the sums by role (``Report.usage``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["LLMCall", "RoleUsage", "Usage"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LLMCall(_Record):
    """One model call, whatever its outcome."""

    role: str
    step: str
    backend: str
    ok: bool = True
    error: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None
    latency_ms: float = 0.0
    # Of latency_ms, the time before the first token (reading the prompt); None when
    # the backend cannot tell. The rest is generation.
    prompt_ms: float | None = None
    attempts: int = 1
    usage_reported: bool = True


class RoleUsage(_Record):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0


class Usage(_Record):
    """Token and call accounting, summed from ``log``."""

    calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    by_role: dict[str, RoleUsage] = {}
    log: list[LLMCall] = []

    @classmethod
    def of(cls, calls: list[LLMCall]) -> Usage:
        by_role: dict[str, RoleUsage] = {}
        for c in calls:
            r = by_role.setdefault(c.role, RoleUsage())
            r.calls += 1
            r.prompt_tokens += c.prompt_tokens
            r.completion_tokens += c.completion_tokens
            r.latency_ms = round(r.latency_ms + c.latency_ms, 2)
        return cls(
            calls=len(calls),
            failed_calls=sum(1 for c in calls if not c.ok),
            prompt_tokens=sum(c.prompt_tokens for c in calls),
            completion_tokens=sum(c.completion_tokens for c in calls),
            cached_tokens=sum(c.cached_tokens or 0 for c in calls),
            by_role=by_role,
            log=calls,
        )
