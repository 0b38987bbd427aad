"""A small JSON-over-HTTP client shared by the search and Wikipedia backends.

aiohttp does the HTTP, aiolimiter keeps each backend under its request rate,
and tenacity retries 429, 5xx and timeouts with exponential backoff (honouring
``Retry-After``). Whatever still fails is translated into the engine's
:class:`~zofia_engine.errors.SourceError` tree, so callers catch one family.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import aiohttp
from aiolimiter import AsyncLimiter
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from ..errors import SourceRateLimitedError, SourceResponseError, SourceTimeoutError

__all__ = ["JsonHttpClient", "retry_delay"]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class _RetryableStatus(Exception):
    def __init__(self, status: int, retry_after: float | None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.retry_after = retry_after


class _Timeout(Exception):
    pass


def _parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: fall back to exponential backoff


def _numbers(value: str | None) -> list[float]:
    try:
        return [float(v) for v in (value or "").split(",") if v.strip()]
    except ValueError:
        return []


def retry_delay(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait before retrying a 429, from the response headers.

    ``Retry-After`` when present; otherwise the ``X-RateLimit-Reset`` of the
    windows whose ``X-RateLimit-Remaining`` is 0 (Brave sends one value per
    window: "1, 1419704" is one second for the per-second limit and about 16
    days for the monthly quota). ``None`` when the headers say nothing.
    """
    after = _parse_retry_after(headers.get("Retry-After"))
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


class JsonHttpClient:
    """GET JSON from one API with rate limiting, retries and translated errors.

    Args:
        source: the name used in errors and reports, e.g. ``"web:brave"``.
        timeout_s: total time allowed for one attempt.
        retries: further attempts after the first, for 429/5xx/timeouts.
        requests_per_second: the backend's rate limit.
        headers: sent with every request (API keys, User-Agent).
        backoff_s: the first backoff step; doubles each retry, capped at ``max_backoff_s``.
    """

    def __init__(
        self,
        source: str,
        *,
        timeout_s: float = 10.0,
        retries: int = 3,
        requests_per_second: float = 1.0,
        headers: Mapping[str, str] | None = None,
        backoff_s: float = 0.5,
        max_backoff_s: float = 8.0,
    ) -> None:
        self.source = source
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._retries = retries
        # Whole requests per period: 0.5 rps is 1 request per 2 s, 5 rps is 5 per 1 s.
        if requests_per_second >= 1:
            self._limiter = AsyncLimiter(requests_per_second, 1.0)
        else:
            self._limiter = AsyncLimiter(1, 1.0 / requests_per_second)
        self._headers = dict(headers or {})
        self._backoff = wait_exponential(multiplier=backoff_s, max=max_backoff_s)
        self._max_backoff = max_backoff_s
        self._session: aiohttp.ClientSession | None = None

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _RetryableStatus) and exc.retry_after is not None:
            return min(exc.retry_after, self._max_backoff)
        return float(self._backoff(state))

    async def get_json(self, url: str, params: Mapping[str, str | int] | None = None) -> Any:
        """GET ``url`` and return the decoded JSON body.

        Raises:
            SourceRateLimitedError: 429 on every attempt.
            SourceTimeoutError: no complete answer in time on every attempt.
            SourceResponseError: another error status, a failed connection, or a body
                that is not JSON.
        """
        attempts = self._retries + 1
        retrying = AsyncRetrying(
            retry=retry_if_exception_type((_RetryableStatus, _Timeout)),
            stop=stop_after_attempt(attempts),
            wait=self._wait,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._get_once(url, params)
        except _RetryableStatus as exc:
            if exc.status == 429:
                raise SourceRateLimitedError(
                    self.source, f"rate limited (HTTP 429) after {attempts} attempts"
                ) from None
            raise SourceResponseError(
                self.source, f"HTTP {exc.status} after {attempts} attempts"
            ) from None
        except _Timeout:
            raise SourceTimeoutError(
                self.source, f"no answer within {self._timeout.total:g} s, {attempts} attempts"
            ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def _get_once(self, url: str, params: Mapping[str, str | int] | None) -> Any:
        session = self._ensure_session()
        try:
            async with self._limiter, session.get(url, params=params) as resp:
                if resp.status in RETRY_STATUSES:
                    delay = retry_delay(resp.headers)
                    if resp.status == 429 and delay is not None and delay > self._max_backoff:
                        # A spent quota: waiting for it within one check is pointless.
                        raise SourceRateLimitedError(
                            self.source, f"quota exhausted (HTTP 429); resets in {delay:.0f} s"
                        )
                    raise _RetryableStatus(resp.status, delay)
                body = await resp.read()
                if resp.status >= 400:
                    raise SourceResponseError(
                        self.source, f"HTTP {resp.status}: {body[:200].decode(errors='replace')}"
                    )
        except TimeoutError as exc:
            raise _Timeout() from exc
        except aiohttp.ClientError as exc:
            raise SourceResponseError(self.source, f"connection failed: {exc}") from exc
        try:
            return json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SourceResponseError(self.source, f"malformed JSON: {exc}") from exc

    def _ensure_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=self._timeout, headers=self._headers)
        return self._session

    async def aclose(self) -> None:
        """Close the underlying connection pool."""
        if self._session is not None:
            await self._session.close()
            self._session = None
