"""What the check service refuses, as typed records: a request a limit refuses
(:class:`Refusal`, carried by :class:`RateLimitedError`, or :class:`BusyError` for a
limit of the whole deployment), and a review the service's rules refuse
(:class:`ReviewRefused`). Each exception's message is English, for the log; the bots say
it in the asker's language (:mod:`bots.render.sentences`)."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Literal

from zofia_engine.errors import ZofiaError

__all__ = [
    "BusyError",
    "Limit",
    "RateLimitedError",
    "Refusal",
    "ReviewRefusal",
    "ReviewRefused",
    "wait_words",
]


class Limit(enum.StrEnum):
    """Which limit refused a request."""

    USER_RATE = "user_rate"  #: ``user_per_minute``
    CHAT_RATE = "chat_rate"  #: ``chat_per_minute``
    USER_DAILY = "user_daily"  #: ``user_daily``, over the last 24 hours
    CHAT_DAILY = "chat_daily"  #: ``chat_daily``
    PRIVATE_QUEUE = "private_queue"  #: a private chat's requests waiting their turn
    USER_PENDING = "user_pending"  #: the user's share of the pending checks
    CHAT_PENDING = "chat_pending"  #: the chat's share of the pending checks
    USER_BUDGET = "user_budget"  #: the user's share of the day's token budget
    CHAT_BUDGET = "chat_budget"  #: the chat's share of the day's token budget
    BUDGET = "budget"  #: the deployment's day's token budget
    QUEUE = "queue"  #: the deployment's pending checks (``max_pending_checks``)


#: the limits of the deployment as a whole (raised as :class:`BusyError`)
DEPLOYMENT = frozenset({Limit.BUDGET, Limit.QUEUE})


@dataclass(frozen=True)
class Refusal:
    """Why a request was refused, and when that limit frees up.

    Args:
        limit: which limit.
        retry_after_s: when it frees up, from now (at least 1 s).
        count: the limit's bound (a rate's or a quota's N), or what is held against it
            (the checks waiting; the pending checks of the deployment).
        held: a budget (or a share of it) is held by checks under way, which free it
            when they end; ``False``: it is spent, until midnight (UTC).
    """

    limit: Limit
    retry_after_s: float
    count: int = 0
    held: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "retry_after_s", max(1.0, float(self.retry_after_s)))


_LOG_WORDS = {
    Limit.USER_RATE: "{count} checks a minute for you",
    Limit.CHAT_RATE: "{count} checks a minute in this chat",
    Limit.USER_DAILY: "{count} checks a day for you",
    Limit.CHAT_DAILY: "{count} checks a day in this chat",
    Limit.PRIVATE_QUEUE: "{count} requests already waiting in this private chat",
    Limit.USER_PENDING: "{count} checks of yours pending, your share",
    Limit.CHAT_PENDING: "{count} checks of this chat pending, its share",
    Limit.USER_BUDGET: "your share of today's checking budget {state}",
    Limit.CHAT_BUDGET: "this chat's share of today's checking budget {state}",
    Limit.BUDGET: "today's checking budget {state}",
    Limit.QUEUE: "the bot is busy with {count} checks",
}


def wait_words(seconds: float) -> str:
    """A wait in English, rounded up: "40 s", "3 min", "2 h"."""
    seconds = max(1, math.ceil(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{math.ceil(seconds / 60)} min"
    return f"{math.ceil(seconds / 3600)} h"


class RateLimitedError(ZofiaError):
    """A request was refused by a limit: :attr:`refusal` says which, and when it frees.
    Its message is English, for the log; the bots say it in the asker's language."""

    def __init__(self, refusal: Refusal) -> None:
        state = "held by checks under way" if refusal.held else "spent"
        reason = _LOG_WORDS[refusal.limit].format(count=refusal.count, state=state)
        super().__init__(
            f"Limit reached ({reason}); try again in {wait_words(refusal.retry_after_s)}."
        )
        self.refusal = refusal

    @property
    def retry_after_s(self) -> float:
        """When to come back, in seconds from the refusal."""
        return self.refusal.retry_after_s

    @classmethod
    def of(cls, refusal: Refusal) -> RateLimitedError:
        """The exception that carries ``refusal``: a :class:`BusyError` for a limit of
        the whole deployment."""
        return BusyError(refusal) if refusal.limit in DEPLOYMENT else RateLimitedError(refusal)


class BusyError(RateLimitedError):
    """The deployment as a whole is at its bound (checks queued, or the day's token
    budget); :attr:`refusal` says which, and when to come back."""


#: why a review is refused (:class:`ReviewRefused`)
ReviewRefusal = Literal[
    "chat_reviews_off",  # reviews by a chat's moderators are off on this bot
    "unknown_verdict",
    "note_too_long",  # ``limit``: the most characters
    "link_too_long",  # ``limit``: the most characters
    "not_a_link",  # the link is no http(s) address
    "no_verdict",  # the check has none to review (not finished, or failed)
    "scam_called_true",  # a chat's moderator may not call a likely scam true
    "reviewer_limit",  # ``limit`` reviews by one reviewer in the window
    "check_limit",  # ``limit`` reviews of one check in one chat in the window
]


class ReviewRefused(ZofiaError):
    """A review the service's rules refuse: :attr:`kind` says which rule, :attr:`limit`
    its number when it has one, :attr:`retry_after_s` when a limit frees up. The message
    is English, for the log; :func:`bots.render.sentences.review_refusal` words it."""

    def __init__(self, kind: ReviewRefusal, *, limit: int = 0, retry_after_s: float = 0.0):
        super().__init__(f"review refused: {kind}" + (f" ({limit})" if limit else ""))
        self.kind: ReviewRefusal = kind
        self.limit = limit
        self.retry_after_s = retry_after_s
