"""A small JSON-over-HTTP client shared by the search and Wikipedia backends.

aiohttp does the HTTP; :mod:`zofia_engine.retrying` keeps each backend under its
request rate and retries 429, 5xx and timeouts with exponential backoff (honouring
``Retry-After``). Whatever still fails is translated into the engine's
:class:`~zofia_engine.errors.SourceError` tree, so callers catch one family.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypedDict, Unpack

import aiohttp

from ..config import ENV_ALIASES
from ..errors import (
    ConfigError,
    SourceRateLimitedError,
    SourceResponseError,
    SourceTimeoutError,
)
from ..retrying import Backoff, rate_limiter, retry_delay, retrying

__all__ = ["JsonHttpClient", "Pace", "paced", "required_key"]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def required_key(value: str, setting: str) -> str:
    """The API key ``value`` of the setting ``setting`` (``"web.brave.api_key"``),
    stripped; empty, a :class:`ConfigError` that says where to set it."""
    key = value.strip()
    if not key:
        path = tuple(setting.split("."))
        aliases = [name for name, target in ENV_ALIASES.items() if target == path]
        override = "ZOFIA__" + "__".join(part.upper() for part in path)
        raise ConfigError(f"{setting} is empty (set {' or '.join([*aliases, override])})")
    return key


class Pace(TypedDict, total=False):
    """How a backend's requests are paced and retried: the time one attempt may take,
    further attempts after a 429, a 5xx or a timeout, the request rate to keep under,
    and the first backoff step (doubling each retry, up to ``max_backoff_s``)."""

    timeout_s: float
    retries: int
    requests_per_second: float
    backoff_s: float
    max_backoff_s: float


def paced(section: Any, backend: Any) -> Pace:
    """The :class:`Pace` a backend's settings give: the section's ``timeout_s`` and
    ``retries`` (``[web]``, ``[factcheck]``, ``[wikipedia]``), and the backend table's own
    ``requests_per_second`` (``[web.brave]`` …)."""
    return Pace(
        timeout_s=section.timeout_s,
        retries=section.retries,
        requests_per_second=backend.requests_per_second,
    )


class _RetryableStatus(Exception):
    def __init__(self, status: int, retry_after: float | None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.retry_after = retry_after


class _Timeout(Exception):
    pass


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, _RetryableStatus | _Timeout)


class JsonHttpClient:
    """JSON from one API (GET, or POST with a JSON body) with rate limiting, retries
    and translated errors.

    Args:
        source: the name used in errors and reports, e.g. ``"web:brave"``.
        headers: sent with every request (API keys, User-Agent).
        pace: the :class:`Pace` (defaults: 10 s an attempt, 3 retries, 1 request a
            second, backoff from 0.5 s up to 8 s).
    """

    def __init__(
        self, source: str, *, headers: Mapping[str, str] | None = None, **pace: Unpack[Pace]
    ) -> None:
        timeout_s = pace.get("timeout_s", 10.0)
        retries = pace.get("retries", 3)
        requests_per_second = pace.get("requests_per_second", 1.0)
        backoff_s = pace.get("backoff_s", 0.5)
        max_backoff_s = pace.get("max_backoff_s", 8.0)
        self.source = source
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._retries = retries
        self._limiter = rate_limiter(requests_per_second)
        self._headers = dict(headers or {})
        self._wait = Backoff(
            backoff_s,
            max_backoff_s,
            lambda exc: exc.retry_after if isinstance(exc, _RetryableStatus) else None,
            jitter=False,
        )
        self._max_backoff = max_backoff_s
        self._session: aiohttp.ClientSession | None = None

    async def get_json(self, url: str, params: Mapping[str, str | int] | None = None) -> Any:
        """GET ``url`` and return the decoded JSON body (errors as :meth:`post_json`)."""
        return await self._json(url, params, None)

    async def post_json(
        self, url: str, body: Any, params: Mapping[str, str | int] | None = None
    ) -> Any:
        """POST ``body`` as JSON to ``url`` and return the decoded JSON answer.

        Raises:
            SourceRateLimitedError: 429 on every attempt.
            SourceTimeoutError: no complete answer in time on every attempt.
            SourceResponseError: another error status, a failed connection, or a body
                that is not JSON.
        """
        return await self._json(url, params, body)

    async def _json(self, url: str, params: Mapping[str, str | int] | None, payload: Any) -> Any:
        attempts = self._retries + 1
        try:
            async for attempt in retrying(_retryable, self._retries, self._wait):
                with attempt:
                    return await self._once(url, params, payload)
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

    async def _once(self, url: str, params: Mapping[str, str | int] | None, payload: Any) -> Any:
        session = self._ensure_session()
        try:
            if self._limiter is not None:
                await self._limiter.acquire()
            method = "GET" if payload is None else "POST"
            async with session.request(method, url, params=params, json=payload) as resp:
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
