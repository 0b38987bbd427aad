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
from zofia_engine.post import Post, PostAudio
from zofia_engine.report import EvidenceItem, Report

__all__ = [
    "MAX_LINK",
    "MAX_NOTE",
    "NO_REPORT",
    "Admission",
    "CardPlace",
    "CardState",
    "ChatCorrection",
    "ChatGoneError",
    "CheckFailedError",
    "CheckNotFoundError",
    "CheckRow",
    "Claim",
    "Failed",
    "Fetched",
    "FollowUp",
    "Images",
    "Message",
    "Missing",
    "NoReportError",
    "Outcome",
    "QueueDue",
    "Requester",
    "ReviewRequest",
    "SendCorrection",
    "ShownCard",
    "seen_elsewhere",
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
class Fetched:
    """What a platform still held when a request was admitted, fetched: more text (a
    file's), which follows the message's text; images; a voice note (their downloads)."""

    text: str = ""
    images: Images = ()
    audio: PostAudio | None = None


@dataclass(frozen=True)
class Message:
    """What a front-end asks to have checked (:meth:`CheckService.take
    <bots.service.checks.CheckService.take>`): the text, images and voice note at hand,
    and how the rest is fetched once the request is admitted.

    Args:
        text: the post's text (with images or a voice note, their caption; it may be
            empty). A text that is only a link is fetched, and its article (or image)
            checked.
        url: where the post was found; alone, without text, it is fetched.
        images: the images at hand.
        audio: the voice note at hand.
        fetch: once admitted, what the platform still holds (:class:`Fetched`): more
            text (a file's), which follows ``text``, the images and the voice note
            (their download).
        refuse: refuses, before any limit counts the request, what needs no download
            (more images than a post may have, a file or a voice note declared too large
            or too long).
        turn: awaited once admitted, before any work: the request's turn in its
            private chat's line.
        origin, published: where the post came from and when, if known.
        language: the chat's language, the one the panel writes in (``""``: English).
        allow_private_urls: let a link to a private address be fetched (tests only).
    """

    text: str
    url: str = ""
    images: Images = ()
    audio: PostAudio | None = None
    fetch: Callable[[], Awaitable[Fetched]] | None = None
    refuse: Callable[[], None] | None = None
    turn: Callable[[], Awaitable[None]] | None = None
    origin: str = ""
    published: dt.date | None = None
    language: str = ""
    allow_private_urls: bool = False

    @classmethod
    def of(cls, post: Post) -> Message:
        """A post at hand (the terminal's, its link fetched already) as a message."""
        images = tuple((image.data, image.media_type) for image in post.images)
        return cls(
            post.text,
            url=post.url,
            images=images,
            audio=post.audio,
            origin=post.origin,
            published=post.published,
            language=post.language,
        )


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
    in force; ``note`` and ``link`` are the review's. ``source`` is the check whose word
    it is (the check itself, or a newer recheck of its text). ``rechecked``: the word is
    a recheck's machine verdict, no moderator's; ``everywhere``: the service's reviewers'
    (or a recheck's), else the chat's own moderators'. ``votes`` are the verdict's.
    """

    platform: str
    chat: str
    cards: tuple[tuple[ShownCard, CardState], ...]
    shown: str
    verdict: str
    note: str = ""
    link: str = ""
    source: str = ""
    rechecked: bool = False
    everywhere: bool = True
    votes: tuple[int, int] = (0, 0)


#: a platform's sender of corrections: edit a chat's cards, then tell it once; raises
#: when it could not (:class:`ChatGoneError` when it never will)
SendCorrection = Callable[[ChatCorrection], Awaitable[None]]


class ChatGoneError(Exception):
    """The chat can never be told: the bot may no longer post there, or it is gone (a
    platform's sender raises it; the service gives the chat up at once)."""


class CheckFailedError(ZofiaError):
    """The engine could not finish the check; the message says what failed."""


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
