"""``store.reviews``: moderators' reviews of verdicts, an audit trail.

A review confirms a check's verdict or changes it to another outcome (true, false,
misleading, unproven), with a short note and an optional link. Rows are only ever
added: a review is never edited or deleted (the table refuses an ``UPDATE``), only
superseded by a newer review of the same check; :meth:`Reviews.latest` is the one in
force. A review is of an original check: one asked of a repeat is stored against the
check it repeats, as votes are, and so counts for every repeat of it *where it
applies*: a review belongs to the community that made it. A chat's moderator reviews
for that chat (``chat``: the keyed chat), and the change shows only on that chat's cards
and repeats; a reviewer the settings name, or the operator, reviews for every chat
(``chat`` empty). In a chat, the newest review of either kind is in force.

Reviews are limited per reviewer (:data:`PER_REVIEWER` in :data:`REVIEW_WINDOW`) and per
check and chat (:data:`PER_CHECK`): a flurry of flips never becomes a flurry of updates.

Where a review shows, :func:`apply_review` gives the report a check shows with the
review in force: the reviewer's verdict, and the review itself (``Report.review``) that
keeps the machine's verdict (the card, ``zofia show`` and the report page word it with
:func:`review_of`). The stored report itself stays the machine's.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from zofia_engine.report import OUTCOMES, Confidence, Lean, Report, ReviewInForce
from zofia_engine.text import without_format

from .errors import CheckNotFoundError
from .keys import new_check_id, storable_text
from .locked import LockedDatabase
from .rows import from_iso, to_iso

__all__ = [
    "MAX_LINK",
    "MAX_NOTE",
    "PER_CHECK",
    "PER_REVIEWER",
    "REVIEW_WINDOW",
    "Review",
    "ReviewLimitError",
    "ReviewMark",
    "Reviews",
    "Scope",
    "apply_review",
    "review_of",
]

#: the longest note a review keeps, in characters
MAX_NOTE = 300
#: the longest link a review keeps, in characters
MAX_LINK = 300
#: how many reviews one reviewer may save in :data:`REVIEW_WINDOW`
PER_REVIEWER = 6
#: how many reviews of one check one chat (or the service) may save in the window
PER_CHECK = 2
REVIEW_WINDOW = dt.timedelta(minutes=10)
#: where a review applies: a platform and its keyed chat; ``None`` is every chat's view
Scope = tuple[str, str]


class ReviewLimitError(ValueError):
    """A review refused by the limits; ``retry_after_s`` says when one may be saved."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class Review:
    """One row of ``reviews``: who reviewed which check, when, and to what verdict.

    ``from_verdict`` is the verdict in force before it where it applies (the latest
    review's, else the machine's); ``to_verdict`` equal to it is a confirmation.
    ``reviewer`` is an HMAC of the platform and user id (:func:`~storage.keys.hash_user`),
    never the id; ``chat`` the keyed chat it applies to, ``""`` for every chat.
    """

    id: str
    check_id: str
    reviewer: str
    platform: str
    created_at: dt.datetime
    from_verdict: str
    to_verdict: str
    note: str
    link: str
    chat: str = ""

    @property
    def everywhere(self) -> bool:
        """Whether it applies in every chat (a named reviewer's, or the operator's)."""
        return not self.chat

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Review:
        created = from_iso(row["created_at"])
        assert created is not None
        fields = {name: row[name] for name in cls.__slots__ if name != "created_at"}
        return cls(created_at=created, **fields)


#: a review as a report carries it (the record the engine keeps in ``Report.review``)
ReviewMark = ReviewInForce


# A note or link is shown in other people's chats, so it shows what it says: without the
# characters that hide or reorder text (format characters: zero-width spaces and joiners,
# direction marks, embeddings, overrides and isolates), taken out here, where every
# review enters, before its length and its form are judged.


def _clean_note(note: str) -> str:
    cleaned = " ".join(without_format(storable_text(note)).split())
    if len(cleaned) > MAX_NOTE:
        raise ValueError(f"the note has {len(cleaned)} characters; at most {MAX_NOTE}")
    return cleaned


def _clean_link(link: str) -> str:
    cleaned = without_format(storable_text(link)).strip()
    if cleaned and (not cleaned.startswith(("https://", "http://")) or len(cleaned.split()) > 1):
        raise ValueError(f"the link must be an http(s) address, not {link!r}")
    if len(cleaned) > MAX_LINK:
        raise ValueError(f"the link has {len(cleaned)} characters; at most {MAX_LINK}")
    return cleaned


class Reviews:
    """The moderators' reviews of a store's checks.

    Args:
        db: the store's database, with its lock and clock.
    """

    def __init__(self, db: LockedDatabase) -> None:
        self.db = db

    def add(
        self,
        check_id: str,
        *,
        reviewer: str,
        platform: str,
        verdict: str,
        note: str = "",
        link: str = "",
        chat: str = "",
    ) -> Review:
        """Record a review of an original check's verdict (a new row; none is changed).

        Args:
            check_id: the check; a review of a repeat is of the check it repeats.
            reviewer: :func:`~storage.keys.hash_user` of the moderator.
            platform: where the moderator reviewed it (``telegram``, ``discord``, ``cli``).
            verdict: ``true``, ``false``, ``misleading`` or ``unproven``; the verdict in
                force for a confirmation.
            note: why, in a few words (at most :data:`MAX_NOTE` characters).
            link: an ``http(s)`` address backing it, or ``""``.
            chat: the keyed chat it applies to (a chat's moderator); ``""``: every chat.

        Returns:
            The review as stored.

        Raises:
            ReviewLimitError: the reviewer, or this check in this chat, reached its limit.
            ValueError: an unknown verdict, a long note, a link that is no address, or a
                check with no verdict to review (not finished, or failed).
            CheckNotFoundError: no such check.
        """
        if verdict not in OUTCOMES:
            raise ValueError(f"verdict must be one of {', '.join(OUTCOMES)}, not {verdict!r}")
        row: dict[str, Any] = {
            "id": new_check_id(),
            "check_id": check_id,
            "reviewer": storable_text(reviewer),
            "platform": storable_text(platform),
            "created_at": self.db.now(),
            "to_verdict": verdict,
            "note": _clean_note(note),
            "link": _clean_link(link),
            "chat": storable_text(chat),
        }
        with self.db.write():
            found = self.db.execute(
                "SELECT coalesce(repeat_of, id) FROM checks WHERE id = ?", [check_id]
            ).fetchone()
            if found is None:
                raise CheckNotFoundError(f"no check {check_id!r}")
            row["check_id"] = found[0]
            if row["platform"] != "cli":  # the operator, at the terminal, is not limited
                self._refuse_if_limited(row)
            row["from_verdict"] = self._verdict_in_force(row)
            self.db.table("reviews").insert(row)
        return Review.from_row(row)

    def _verdict_in_force(self, row: dict[str, Any]) -> str:
        """The verdict the review ``row`` changes: the latest review's in its scope, else
        the report's; read in the write that adds ``row``.

        Raises:
            ValueError: the check has no verdict, or a chat's moderator calls a likely
                scam true.
        """
        check_id = row["check_id"]
        scope = (row["platform"], row["chat"]) if row["chat"] else None
        before = self.latest(check_id, scope)
        found = self.db.execute(
            "SELECT verdict FROM reports WHERE check_id = ?", [check_id]
        ).fetchone()
        if found is None:
            raise ValueError(f"check {check_id!r} has no verdict to review")
        if row["chat"] and found[0] == "scam" and row["to_verdict"] == "true":
            raise ValueError("only the service's reviewers may call a likely scam true")
        in_force: str = before.to_verdict if before is not None else found[0]
        return in_force

    def _refuse_if_limited(self, row: dict[str, Any]) -> None:
        """The limits, read in the write that adds ``row`` (so a burst passes them no
        further than one review at a time would)."""
        since = self.db.clock() - REVIEW_WINDOW
        mine = self.db.rows(
            "SELECT created_at FROM reviews WHERE reviewer = ? AND created_at >= ?"
            " ORDER BY created_at",
            [row["reviewer"], to_iso(since)],
        )
        this = self.db.rows(
            "SELECT created_at FROM reviews WHERE check_id = ? AND chat = ? AND created_at >= ?"
            " ORDER BY created_at",
            [row["check_id"], row["chat"], to_iso(since)],
        )
        for rows, limit, what in ((mine, PER_REVIEWER, "you"), (this, PER_CHECK, "this post")):
            if len(rows) >= limit:
                oldest = from_iso(str(rows[0][0]))
                assert oldest is not None
                wait = (oldest + REVIEW_WINDOW - self.db.clock()).total_seconds()
                raise ReviewLimitError(
                    f"{what} reached {limit} reviews in {int(REVIEW_WINDOW.total_seconds() // 60)}"
                    " minutes",
                    max(1.0, wait),
                )

    def latest(self, check_id: str, scope: Scope | None = None) -> Review | None:
        """The review in force on a check where ``scope`` looks (the newest of those for
        every chat and, given a scope, those of that chat), or ``None``."""
        found = self.history(check_id, limit=1, scope=scope)
        return found[0] if found else None

    def history(
        self, check_id: str, *, limit: int | None = None, scope: Scope | None = None
    ) -> list[Review]:
        """A check's reviews, newest first: the audit trail (all of them, or those that
        apply where ``scope`` looks: for every chat, and that chat's)."""
        sql = "SELECT * FROM reviews WHERE check_id = ?"
        params: list[Any] = [check_id]
        if scope is not None:
            sql += " AND (chat = '' OR (platform = ? AND chat = ?))"
            params += list(scope)
        elif limit is not None:
            sql += " AND chat = ''"
        sql += " ORDER BY created_at DESC, rowid DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [Review.from_row(row) for row in self.db.dicts(sql, params)]


def apply_review(report: Report, review: Review | None) -> Report:
    """The report a check shows with ``review`` in force: the reviewer's verdict, and the
    review itself (:attr:`Report.review`, which keeps the machine's verdict,
    ``report.verdict`` as stored). A changed verdict drops the machine's confidence (it
    was in its own verdict); changed to unproven, the panel's verdict becomes the way it
    leaned.

    Returns:
        ``report`` itself when there is no review, else a copy.
    """
    if review is None:
        return report
    machine = report.verdict
    mark = ReviewInForce(
        machine=machine,
        verdict=review.to_verdict,
        note=review.note,
        link=review.link,
        everywhere=review.everywhere,
    )
    update: dict[str, Any] = {"review": mark}
    if review.to_verdict != machine:
        update |= {"verdict": review.to_verdict, "confidence": Confidence()}
        if review.to_verdict == "unproven" and machine in ("true", "false", "misleading"):
            update["lean"] = Lean(outcome=machine, probability=report.confidence.value)
    return report.model_copy(update=update)


def review_of(report: Report) -> ReviewInForce | None:
    """The review :func:`apply_review` put in force on ``report``, or ``None``."""
    return report.review
