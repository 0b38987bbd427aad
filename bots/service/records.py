"""The check service's records, its ground floor: what crosses from the service to the
renderers and the platforms, and what they hand it.

Who asks (:class:`Requester`), what a finished check answers (:class:`Outcome`, or
:class:`Failed`), a request the limits let in (:class:`Admission`) or refused
(:class:`Refusal`, carried by :class:`RateLimitedError`), a follow-up's answer
(:class:`FollowUp`), a moderator's review asked (:class:`ReviewRequest`) and refused
(:class:`ReviewRefused`), and the service's errors. Each is plain data: the renderers
word it (:mod:`bots.render.sentences`), and nothing here loads the store's drivers, the
job queue or a model.

The service's errors, each a :class:`~zofia_engine.errors.ZofiaError`::

    ZofiaError
    ├── CheckFailedError        the engine could not finish the check
    ├── RateLimitedError        a limit refused the request (its Refusal)
    │   └── BusyError           the deployment is at its bound
    ├── NoReportError           the check has no report to ask about
    ├── ReviewRefused           a review the service's rules refuse (its kind)
    └── StorageError            (storage.errors)
        └── CheckNotFoundError  no such check, or none in this chat
"""

from __future__ import annotations

import datetime as dt
import enum
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from storage.deliveries import Claim
from storage.errors import CheckNotFoundError
from storage.other_chats import seen_elsewhere
from storage.rows import CheckRow, RepeatKind
from storage.shown_cards import CardPlace, ShownCard
from zofia_engine.errors import ZofiaError
from zofia_engine.ports import FollowUpAnswer
from zofia_engine.report import EvidenceItem, Report

__all__ = [
    "MAX_LINK",
    "MAX_NOTE",
    "NO_REPORT",
    "Admission",
    "BusyError",
    "CardPlace",
    "CardState",
    "ChatCorrection",
    "ChatGoneError",
    "CheckFailedError",
    "CheckNotFoundError",
    "CheckRow",
    "Claim",
    "Failed",
    "FollowUp",
    "Images",
    "Limit",
    "Message",
    "Missing",
    "NoReportError",
    "Outcome",
    "QueueDue",
    "RateLimitedError",
    "Refusal",
    "Requester",
    "ReviewRefusal",
    "ReviewRefused",
    "ReviewRequest",
    "ShownCard",
    "seen_elsewhere",
    "wait_words",
]


@dataclass(frozen=True)
class Requester:
    """Who asked, on which platform and in which chat (ids as the platform gives them);
    ``private``: the chat is the user's own with the bot (one request at a time there);
    ``in_group``: the chat is a group or a channel, whose checks may answer other chats
    (:mod:`storage.other_chats`; a private chat's, a key's or the terminal's answer only
    their own)."""

    platform: str
    user_id: str
    chat_id: str = ""
    private: bool = False
    in_group: bool = False


#: why a report page has no report: no such check, its content purged, still running,
#: or failed
Missing = Literal["unknown", "purged", "pending", "failed"]

#: a message's images, each ``(bytes, media type)`` as the platform sent them
Images = tuple[tuple[bytes, str], ...]


@dataclass(frozen=True)
class Message:
    """What a front-end asks to have checked (:meth:`CheckService.take
    <bots.service.checks.CheckService.take>`): the text and images at hand, and how the
    rest is fetched once the request is admitted.

    Args:
        text: the post's text (with images, their caption; it may be empty). A text
            that is only a link is fetched, and its article (or image) checked.
        url: where the post was found; alone, without text, it is fetched.
        images: the images at hand.
        fetch: once admitted, what the platform still holds: more text (a file's),
            which follows ``text``, and the images (their download).
        refuse: refuses, before any limit counts the request, what needs no download
            (more images than a post may have, a file declared too large).
        turn: awaited once admitted, before any work: the request's turn in its
            private chat's line.
        origin, published: where the post came from and when, if known.
        language: the chat's language, the one the panel writes in (``""``: English).
        allow_private_urls: let a link to a private address be fetched (tests only).
    """

    text: str
    url: str = ""
    images: Images = ()
    fetch: Callable[[], Awaitable[tuple[str, Images]]] | None = None
    refuse: Callable[[], None] | None = None
    turn: Callable[[], Awaitable[None]] | None = None
    origin: str = ""
    published: dt.date | None = None
    language: str = ""
    allow_private_urls: bool = False


@dataclass(frozen=True)
class Outcome:
    """A finished check: its report, and where it came from when it is a repeat."""

    check_id: str
    report: Report
    repeat_kind: RepeatKind | None = None
    original_id: str | None = None
    original_at: dt.datetime | None = None
    similarity: float | None = None


@dataclass(frozen=True)
class Failed:
    """A check that ended without a report: why, in English (for the log and the
    sentence :func:`bots.render.sentences.error_sentence` makes of it)."""

    check_id: str
    reason: str


@dataclass(frozen=True)
class CardState:
    """What a check's card shows now: its outcome (with a moderator's review in force
    where it was asked) or why it failed, and what a card says of the post besides:
    where it came from, when, and the language its chat was answered in."""

    outcome: Outcome | Failed
    origin: str = ""
    published: dt.date | None = None
    language: str = ""


#: queues the corrections of the cards a change made due, by original check and
#: platform (the mode's: a ``correct`` job each on the queue; nothing in the local mode,
#: where the bot's poll of the store finds them)
QueueDue = Callable[[dict[str, list[str]]], None]


@dataclass(frozen=True)
class ChatCorrection:
    """One chat to tell of one changed verdict: edit each of its ``cards`` to show its
    state now, then say it once.

    ``shown`` is the verdict the chat was shown (its newest card's), ``verdict`` the one
    in force; ``note`` and ``link`` are the review's. ``rechecked``: the word is a
    recheck's machine verdict, no moderator's; ``everywhere``: the service's reviewers'
    (or a recheck's), else the chat's own moderators'. ``votes`` are the verdict's.
    """

    platform: str
    chat: str
    cards: tuple[tuple[ShownCard, CardState], ...]
    shown: str
    verdict: str
    note: str = ""
    link: str = ""
    rechecked: bool = False
    everywhere: bool = True
    votes: tuple[int, int] = (0, 0)


class ChatGoneError(Exception):
    """The chat can never be told: the bot may no longer post there, or it is gone (a
    platform's sender raises it; the service gives the chat up at once)."""


class CheckFailedError(ZofiaError):
    """The engine could not finish the check; the message says what failed."""


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


@dataclass(frozen=True)
class Admission:
    """A request the limits let in, counted from then on by every limit: its attempt's
    id, and who asked where, as keyed ids (:class:`~bots.service.chats.ChatNamer`)."""

    attempt_id: str
    requester: str
    platform: str
    chat: str
    left_today: int | None = None  # checks its asker may still ask today, this one counted


#: what a question about a check with no report is told
NO_REPORT = (
    "This check has no report to ask about: it is still running, it failed, or its "
    "details have expired."
)


class NoReportError(ZofiaError, LookupError):
    """The check has no report to ask about: it is still running, it failed, or its
    details have expired."""


@dataclass(frozen=True)
class FollowUp:
    """The answer to a follow-up question on check ``check_id``: the checker's answer,
    and the report's evidence it cites, in the order it cites them (for the labels a
    front-end shows instead of the ids)."""

    check_id: str
    answer: FollowUpAnswer
    sources: tuple[EvidenceItem, ...] = ()

    @property
    def text(self) -> str:
        return self.answer.text

    @property
    def answered(self) -> bool:
        return self.answer.answered


#: the longest note a review keeps, in characters
MAX_NOTE = 300
#: the longest link a review keeps, in characters
MAX_LINK = 300


@dataclass(frozen=True)
class ReviewRequest:
    """A moderator's review of check ``check_id``, as a platform or the CLI asks it.

    Args:
        requester: the moderator, and the chat the card is in (a chat's moderator
            reviews for that chat alone; platform ``cli``: the operator, for every chat).
        verdict: ``true``, ``false``, ``misleading`` or ``unproven`` (the verdict in
            force where it applies, to confirm it).
        note: why, in a few words; link: an ``http(s)`` address backing it, or ``""``.
    """

    check_id: str
    requester: Requester
    verdict: str
    note: str = ""
    link: str = ""


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
