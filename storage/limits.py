"""Per-user and per-chat rate limits and daily quotas, counted from the checks table.

Counting stored checks (repeats included) instead of keeping counters in memory
means a restart forgets nothing and every front-end shares the same limits.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from zofia_engine.errors import ZofiaError

from .settings import ServiceSettings
from .store import CheckStore

__all__ = ["BusyError", "RateLimitedError", "RequestLimits", "refuse_if_full", "wait_words"]

MINUTE = dt.timedelta(minutes=1)
DAY = dt.timedelta(days=1)


class RateLimitedError(ZofiaError):
    """A request was refused by a limit; ``retry_after_s`` says when to come back."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class BusyError(RateLimitedError):
    """The deployment as a whole is at its bound (checks queued, or the day's token
    budget); the message says which, and when to come back."""


def wait_words(seconds: float) -> str:
    seconds = max(1, math.ceil(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{math.ceil(seconds / 60)} min"
    return f"{math.ceil(seconds / 3600)} h"


@dataclass(frozen=True)
class _Rule:
    scope: str  # "user" or "chat"
    window: dt.timedelta
    limit: int
    what: str


class RequestLimits:
    """Checks a request against the settings' limits, oldest window first.

    Args:
        store: where past requests are counted.
        settings: the ``[service]`` limits.
    """

    def __init__(self, store: CheckStore, settings: ServiceSettings) -> None:
        self.store = store
        self.user_daily = settings.user_daily
        self.rules = (
            _Rule("user", MINUTE, settings.user_per_minute, "checks a minute for you"),
            _Rule("chat", MINUTE, settings.chat_per_minute, "checks a minute in this chat"),
            _Rule("user", DAY, settings.user_daily, "checks a day for you"),
            _Rule("chat", DAY, settings.chat_daily, "checks a day in this chat"),
        )

    def left_today(self, requester: str, now: dt.datetime) -> int:
        """How many more checks ``requester`` (the user's hash) may ask for in the day's
        window (``user_daily``, the last 24 hours), the checks already asked counted.
        Read only."""
        used = self.store.checks.count(since=now - DAY, requester=requester, up_to=self.user_daily)
        return max(0, self.user_daily - used)

    def check(self, *, requester: str, platform: str, chat: str, now: dt.datetime) -> None:
        """Raise :class:`RateLimitedError` if one more request would pass a limit."""
        for rule in self.rules:
            since = now - rule.window
            scope = (
                {"requester": requester}
                if rule.scope == "user"
                else {"platform": platform, "chat": chat}
            )
            used = self.store.checks.count(since=since, up_to=rule.limit, **scope)
            if used < rule.limit:
                continue
            oldest = self.store.checks.oldest(since=since, **scope) or now
            wait = (oldest + rule.window - now).total_seconds()
            raise RateLimitedError(
                f"Limit reached ({rule.limit} {rule.what}); try again in {wait_words(wait)}.",
                retry_after_s=max(1.0, wait),
            )


def refuse_if_full(
    store: CheckStore, settings: ServiceSettings, pending: int, now: dt.datetime
) -> None:
    """Refuse a new engine run when the deployment is at its bounds: ``pending`` runs
    already, or today's token budget spent. Repeats, which cost nothing, are answered
    before this is asked.

    Raises:
        BusyError: too many checks are pending here, or today's tokens are spent.
    """
    if settings.daily_token_budget:
        midnight = now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        if store.reports.tokens_since(midnight) >= settings.daily_token_budget:
            left = (midnight + dt.timedelta(days=1) - now).total_seconds()
            raise BusyError(
                "Today's checking budget is spent; answers to posts already checked "
                f"still come. New checks start again in {wait_words(left)}.",
                retry_after_s=left,
            )
    if pending >= settings.max_pending_checks:
        times = store.checks.recent_seconds()
        typical = sum(times) / len(times) if times else 120.0
        queued = pending - settings.max_pending_checks + 1
        wait = typical * queued / settings.max_concurrent_checks
        raise BusyError(
            f"The bot is busy with {pending} checks; please try again in {wait_words(wait)}.",
            retry_after_s=max(wait, 1.0),
        )
