"""Per-user and per-chat rate limits, shares and daily quotas.

The rate limits count admitted requests (:mod:`storage.attempts`), written in the
same write transaction that counted them (:meth:`RequestLimits.admit`): a burst of
concurrent requests passes a limit no further than one at a time would, a restart
forgets nothing, and every front-end and replica shares the same counts. In a private
chat a user's requests are answered in turn: ``private_in_flight`` at once and
``private_queue`` more waiting, each counted in the user's share of the pending checks
from its admission. The shares (:meth:`RequestLimits.refuse_if_full`) bound what one
user or one chat may hold of the pending checks and of the day's token budget, in the
transaction that writes a new engine run: a check reserves ``token_reserve`` tokens
there and is charged its real count once its report is stored (a check running,
queued or failed keeps its reserve).

A refusal is a typed value, :class:`Refusal`: which limit (:class:`Limit`), when it
frees up, and for a budget whether it is spent (until midnight, UTC) or only held by
checks under way (until they end). The bots say it in the asker's language
(:func:`bots.render.sentences.refusal_sentence`); the exception's own message is
English, for the log.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from storage import RequestScope
from storage.store import CheckStore

from .records import Admission
from .refusals import Limit, RateLimitedError, Refusal
from .settings import ServiceSettings

__all__ = ["RequestLimits"]

MINUTE = dt.timedelta(minutes=1)
DAY = dt.timedelta(days=1)
#: an attempt not ended after this long (its process died) no longer holds its place
IN_FLIGHT_AGE = dt.timedelta(minutes=30)


@dataclass(frozen=True)
class _Rule:
    scope: str  # "user" or "chat"
    window: dt.timedelta
    bound: int
    limit: Limit


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
            _Rule("user", MINUTE, settings.user_per_minute, Limit.USER_RATE),
            _Rule("chat", MINUTE, settings.chat_per_minute, Limit.CHAT_RATE),
            _Rule("user", DAY, settings.user_daily, Limit.USER_DAILY),
            _Rule("chat", DAY, settings.chat_daily, Limit.CHAT_DAILY),
        )

    def left_today(self, requester: str, now: dt.datetime) -> int:
        """How many more checks ``requester`` (the user's hash) may ask for in the day's
        window (``user_daily``, the last 24 hours), the requests already admitted
        counted. Read only."""
        used = self.store.attempts.count(
            RequestScope(now - DAY, requester), up_to=self.settings.user_daily
        )
        return max(0, self.settings.user_daily - used)

    def admit(
        self, *, requester: str, platform: str, chat: str, private: bool, now: dt.datetime
    ) -> Admission:
        """Count the limits and record the request, in one write transaction (blocking).

        Raises:
            RateLimitedError: a limit is reached; its ``refusal`` says which, and when
                it frees up.
        """
        with self.store.write():
            self.check(requester=requester, platform=platform, chat=chat, now=now)
            if private:
                self._private_turn(requester, platform, chat, now)
            attempt = self.store.attempts.add(
                platform=platform, chat=chat, requester=requester, private=private
            )
            left = self.left_today(requester, now)
        return Admission(attempt, requester, platform, chat, left)

    def check(self, *, requester: str, platform: str, chat: str, now: dt.datetime) -> None:
        """Raise :class:`RateLimitedError` if one more request would pass a limit."""
        for rule in self.rules:
            since = now - rule.window
            scope = (
                RequestScope(since, requester=requester)
                if rule.scope == "user"
                else RequestScope(since, platform=platform, chat=chat)
            )
            used = self.store.attempts.count(scope, up_to=rule.bound)
            if used < rule.bound:
                continue
            oldest = self.store.attempts.oldest(scope) or now
            # Never past the window: a request admitted on another thread after ``now``
            # was taken is the oldest here too.
            wait = min((oldest + rule.window - now).total_seconds(), rule.window.total_seconds())
            raise RateLimitedError.of(Refusal(rule.limit, wait, count=rule.bound))

    def _private_turn(self, requester: str, platform: str, chat: str, now: dt.datetime) -> None:
        """A private chat's request waits its turn behind the user's others under way,
        ``private_queue`` of them at most; each counts in the user's share of the
        pending checks from now, with the checks the user has pending elsewhere."""
        settings = self.settings
        bound = settings.private_in_flight + settings.private_queue
        open_now = self.store.attempts.count(
            RequestScope(now - IN_FLIGHT_AGE, requester), up_to=bound, open_in_private=True
        )
        if open_now >= bound:
            waiting = open_now - settings.private_in_flight
            raise RateLimitedError.of(
                Refusal(Limit.PRIVATE_QUEUE, self._typical_s(), count=waiting)
            )
        mine, here = self.store.checks.pending_of(requester=requester, platform=platform, chat=chat)
        held = open_now + max(0, mine - here)  # this chat's are among its open requests
        if held >= self._pending_cap(settings.user_pending_share):
            raise RateLimitedError.of(Refusal(Limit.USER_PENDING, self._typical_s(), count=held))

    def _pending_cap(self, share: float) -> int:
        return max(1, math.floor(self.settings.max_pending_checks * share))

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
        settings = self.settings
        mine, chat_s = self.store.checks.pending_of(
            requester=who.requester, platform=who.platform, chat=who.chat
        )
        self._within_budget(who, (pending, mine, chat_s), now)
        if pending >= settings.max_pending_checks:
            queued = pending - settings.max_pending_checks + 1
            wait = self._typical_s() * queued / settings.max_concurrent_checks
            raise RateLimitedError.of(Refusal(Limit.QUEUE, wait, count=pending))
        shares = (
            (mine, settings.user_pending_share, Limit.USER_PENDING),
            (chat_s, settings.chat_pending_share, Limit.CHAT_PENDING),
        )
        for held, share, limit in shares:
            if held >= self._pending_cap(share):
                raise RateLimitedError.of(Refusal(limit, self._typical_s(), count=held))

    def refuse_if_spent(self, who: Admission, pending: int, now: dt.datetime) -> None:
        """Refuse a request that costs model work (a follow-up question) when the day's
        token budget, or the requester's or the chat's share of it, is spent or reserved;
        ``pending`` engine runs in all hold a reserve each.

        Raises:
            BusyError: the deployment's budget is spent.
            RateLimitedError: the requester's or the chat's share is spent.
        """
        mine, chat_s = self.store.checks.pending_of(
            requester=who.requester, platform=who.platform, chat=who.chat
        )
        self._within_budget(who, (pending, mine, chat_s), now)

    def _within_budget(
        self, who: Admission, running: tuple[int, int, int], now: dt.datetime
    ) -> None:
        """Refuse when the day's token budget, or the user's or the chat's share of it,
        is spent or reserved. ``running`` are the engine runs pending of everyone, of the
        user and of the chat, each holding one reserve: a bound reached only with their
        reserves frees up when they end (about one check's time), not at midnight."""
        budget = self.settings.daily_token_budget
        if not budget:
            return
        midnight = now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        to_midnight = (midnight + DAY - now).total_seconds()
        charged = self.store.checks.day_charges(
            midnight, requester=who.requester, platform=who.platform, chat=who.chat
        )
        caps = (
            (budget, Limit.BUDGET),
            (budget * self.settings.user_budget_share, Limit.USER_BUDGET),
            (budget * self.settings.chat_budget_share, Limit.CHAT_BUDGET),
        )
        for tokens, pending, (cap, limit) in zip(charged, running, caps, strict=True):
            if tokens < cap:
                continue
            held = tokens - pending * self.token_reserve < cap
            wait = self._typical_s() if held else to_midnight
            raise RateLimitedError.of(Refusal(limit, wait, held=held))

    def _typical_s(self) -> float:
        """How long an engine run takes here, of late (120 s when none has finished)."""
        times = self.store.checks.recent_seconds()
        return sum(times) / len(times) if times else 120.0
