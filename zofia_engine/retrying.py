"""Retries and request rates for every HTTP API the engine calls: one policy.

The search and Wikipedia backends (``retrieval/http.py``) and the OpenAI-compatible
backend (``llm/openai_backend.py``) retry what can change (429, server errors,
timeouts, lost connections) with tenacity's jittered exponential backoff, wait as
long as the server asks (``Retry-After``, ``retry-after-ms``, a spent
``X-RateLimit-Reset`` window) up to a cap, give up at once on a wait longer than
the cap (a spent quota), and keep under their request rate with aiolimiter.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime

import tenacity
from aiolimiter import AsyncLimiter

__all__ = ["Backoff", "rate_limiter", "retry_delay", "retrying"]


def rate_limiter(requests_per_second: float) -> AsyncLimiter | None:
    """A limiter for this rate in whole requests (0.5 rps: 1 request per 2 s; 5 rps: 5
    per second), or ``None`` for 0 (no limit)."""
    if requests_per_second <= 0:
        return None
    if requests_per_second >= 1:
        return AsyncLimiter(requests_per_second, 1.0)
    return AsyncLimiter(1, 1.0 / requests_per_second)


def _seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds: a number, or an HTTP date (``None`` if neither)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


def _numbers(value: str | None) -> list[float]:
    try:
        return [float(v) for v in (value or "").split(",") if v.strip()]
    except ValueError:
        return []


def retry_delay(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait before a retry, from its response headers.

    ``retry-after-ms`` (OpenAI), then ``Retry-After`` (seconds or an HTTP date); else
    the ``X-RateLimit-Reset`` of the windows whose ``X-RateLimit-Remaining`` is 0
    (Brave sends one value per window: "1, 1419704" is one second for the per-second
    limit and about 16 days for the monthly quota). ``None`` when they say nothing.
    """
    try:
        return max(0.0, float(headers.get("retry-after-ms", "")) / 1000.0)
    except ValueError:
        pass
    after = _seconds(headers.get("Retry-After"))
    if after is not None:
        return after
    reset = _numbers(headers.get("X-RateLimit-Reset"))
    remaining = _numbers(headers.get("X-RateLimit-Remaining"))
    if not reset:
        return None
    if len(remaining) == len(reset):
        spent = [r for left, r in zip(remaining, reset, strict=True) if left <= 0]
        return max(spent) if spent else None
    return reset[0]


class Backoff:
    """tenacity's ``wait``: the delay the failed attempt asked for (capped), else
    exponential backoff with jitter.

    Args:
        first_s: the first step; it doubles each retry.
        max_s: the longest wait.
        asked: the delay an exception carries (from :func:`retry_delay`), or ``None``.
        jitter: add up to ``first_s`` of random jitter (spreads retries of many callers).
    """

    def __init__(
        self,
        first_s: float,
        max_s: float,
        asked: Callable[[BaseException], float | None],
        *,
        jitter: bool = True,
    ) -> None:
        self.max_s = max_s
        self._asked = asked
        self._exponential: tenacity.wait.wait_base = (
            tenacity.wait_exponential_jitter(multiplier=first_s, max=max_s, jitter=first_s)
            if jitter
            else tenacity.wait_exponential(multiplier=first_s, max=max_s)
        )

    def __call__(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        delay = self._asked(exc) if exc is not None else None
        if delay is not None:
            return min(delay, self.max_s)
        return float(self._exponential(state))


def retrying(
    retryable: Callable[[BaseException], bool], retries: int, wait: Backoff
) -> tenacity.AsyncRetrying:
    """Attempts of one request: the first, and ``retries`` more for what ``retryable``
    accepts; the last failure is raised as it is."""
    return tenacity.AsyncRetrying(
        retry=tenacity.retry_if_exception(retryable),
        stop=tenacity.stop_after_attempt(retries + 1),
        wait=wait,
        reraise=True,
    )
