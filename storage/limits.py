"""Per-user and per-chat rate limits, shares and daily quotas.

The rate limits count admitted requests (:mod:`storage.attempts`), written in the
same write transaction that counted them (:meth:`RequestLimits.admit`): a burst of
concurrent requests passes a limit no further than one at a time would, a restart
forgets nothing, and every front-end and replica shares the same counts. The shares
(:meth:`RequestLimits.refuse_if_full`) bound what one user or one chat may hold of the
pending checks and of the day's token budget, in the transaction that writes a new
engine run: a check reserves ``token_reserve`` tokens there and is charged its real
count once its report is stored (a check running, queued or failed keeps its reserve).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from zofia_engine.errors import ZofiaError

from .settings import ServiceSettings
from .store import CheckStore

__all__ = ["Admission", "BusyError", "RateLimitedError", "RequestLimits", "wait_words"]

MINUTE = dt.timedelta(minutes=1)
DAY = dt.timedelta(days=1)
#: an attempt not ended after this long (its process died) no longer holds its place
IN_FLIGHT_AGE = dt.timedelta(minutes=30)


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
class Admission:
    """A request the limits let in, counted from then on by every limit: its attempt's
    id, and who asked where, as keyed ids (:class:`~storage.chat_operations.ChatOperations`)."""

    attempt_id: str
    requester: str
    platform: str
    chat: str


@dataclass(frozen=True)
class _Rule:
    scope: str  # "user" or "chat"
    window: dt.timedelta
    limit: int
    what: str


class RequestLimits:
    """Admits a request against the settings' limits, oldest window first, and bounds
    what a new engine run may hold (:meth:`refuse_if_full`).

    Args:
        store: where past requests and checks are counted.
        settings: the ``[service]`` limits and shares.
        token_reserve: the tokens a check holds of the day's budget until it ends
            (``llm.max_tokens_per_check``: no check can spend more).
    """

    def __init__(self, store: CheckStore, settings: ServiceSettings, token_reserve: int) -> None:
        self.store = store
        self.settings = settings
        self.token_reserve = token_reserve
        self.rules = (
            _Rule("user", MINUTE, settings.user_per_minute, "checks a minute for you"),
            _Rule("chat", MINUTE, settings.chat_per_minute, "checks a minute in this chat"),
            _Rule("user", DAY, settings.user_daily, "checks a day for you"),
            _Rule("chat", DAY, settings.chat_daily, "checks a day in this chat"),
        )

    def left_today(self, requester: str, now: dt.datetime) -> int:
        """How many more checks ``requester`` (the user's hash) may ask for in the day's
        window (``user_daily``, the last 24 hours), the requests already admitted
        counted. Read only."""
        used = self.store.attempts.count(
            since=now - DAY, requester=requester, up_to=self.settings.user_daily
        )
        return max(0, self.settings.user_daily - used)

    def admit(
        self, *, requester: str, platform: str, chat: str, private: bool, now: dt.datetime
    ) -> Admission:
        """Count the limits and record the request, in one write transaction (blocking).

        Raises:
            RateLimitedError: a limit is reached; ``retry_after_s`` says when to come back.
        """
        with self.store.write():
            self.check(requester=requester, platform=platform, chat=chat, now=now)
            if private:
                self._one_at_a_time(requester, now)
            attempt = self.store.attempts.add(
                platform=platform, chat=chat, requester=requester, private=private
            )
        return Admission(attempt, requester, platform, chat)

    def check(self, *, requester: str, platform: str, chat: str, now: dt.datetime) -> None:
        """Raise :class:`RateLimitedError` if one more request would pass a limit."""
        for rule in self.rules:
            since = now - rule.window
            user = rule.scope == "user"
            who, where, chat_key = (requester, None, None) if user else (None, platform, chat)
            used = self.store.attempts.count(
                since=since, requester=who, platform=where, chat=chat_key, up_to=rule.limit
            )
            if used < rule.limit:
                continue
            oldest = (
                self.store.attempts.oldest(
                    since=since, requester=who, platform=where, chat=chat_key
                )
                or now
            )
            wait = (oldest + rule.window - now).total_seconds()
            raise RateLimitedError(
                f"Limit reached ({rule.limit} {rule.what}); try again in {wait_words(wait)}.",
                retry_after_s=max(1.0, wait),
            )

    def _one_at_a_time(self, requester: str, now: dt.datetime) -> None:
        limit = self.settings.private_in_flight
        under_way = self.store.attempts.count(
            since=now - IN_FLIGHT_AGE, requester=requester, up_to=limit, open_in_private=True
        )
        if under_way >= limit:
            raise RateLimitedError(
                "Your last post is still being checked; send this one again once it is answered.",
                retry_after_s=self._typical_s(),
            )

    def refuse_if_full(self, who: Admission, pending: int, now: dt.datetime) -> None:
        """Refuse a new engine run when the deployment, the requester or the chat is at
        its bound: ``pending`` runs in all (or the requester's or the chat's share of
        them), or the day's token budget (or their share of it) spent or reserved; the
        run admitted last may take its spender past a bound by one reserve at most.
        Repeats, which cost nothing, are answered before this is asked; the caller
        holds the write transaction that writes the run.

        Raises:
            BusyError: the deployment is at its bound.
            RateLimitedError: the requester or the chat is at its share.
        """
        self._within_budget(who, now)
        settings = self.settings
        if pending >= settings.max_pending_checks:
            queued = pending - settings.max_pending_checks + 1
            wait = self._typical_s() * queued / settings.max_concurrent_checks
            raise BusyError(
                f"The bot is busy with {pending} checks; please try again in {wait_words(wait)}.",
                retry_after_s=max(wait, 1.0),
            )
        mine, chat_s = self.store.checks.pending_of(
            requester=who.requester, platform=who.platform, chat=who.chat
        )
        shares = (
            (mine, settings.user_pending_share, "You have"),
            (chat_s, settings.chat_pending_share, "This chat has"),
        )
        for held, share, whose in shares:
            cap = max(1, math.floor(settings.max_pending_checks * share))
            if held >= cap:
                raise RateLimitedError(
                    f"{whose} {held} checks waiting already; please send more once they"
                    " are answered.",
                    retry_after_s=self._typical_s(),
                )

    def refuse_if_spent(self, who: Admission, now: dt.datetime) -> None:
        """Refuse a request that costs model work (a follow-up question) when the day's
        token budget, or the requester's or the chat's share of it, is spent.

        Raises:
            BusyError: the deployment's budget is spent.
            RateLimitedError: the requester's or the chat's share is spent.
        """
        self._within_budget(who, now)

    def _within_budget(self, who: Admission, now: dt.datetime) -> None:
        budget = self.settings.daily_token_budget
        if not budget:
            return
        midnight = now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        left = (midnight + DAY - now).total_seconds()
        wait = f"New checks start again in {wait_words(left)}."
        everyone, mine, chat_s = self.store.checks.day_charges(
            midnight, requester=who.requester, platform=who.platform, chat=who.chat
        )
        if everyone >= budget:
            raise BusyError(
                "Today's checking budget is spent or held by checks under way; answers"
                f" to posts already checked still come. {wait}",
                retry_after_s=left,
            )
        shares = (
            (mine, self.settings.user_budget_share, "Your"),
            (chat_s, self.settings.chat_budget_share, "This chat's"),
        )
        for spent, share, whose in shares:
            if spent >= budget * share:
                raise RateLimitedError(
                    f"{whose} share of today's checking budget is used; answers to posts"
                    f" already checked still come. {wait}",
                    retry_after_s=left,
                )

    def _typical_s(self) -> float:
        """How long an engine run takes here, of late (120 s when none has finished)."""
        times = self.store.checks.recent_seconds()
        return sum(times) / len(times) if times else 120.0
