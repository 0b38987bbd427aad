"""Moderators' reviews, the service's rules: who may review what, the limits a review
meets, and the report a check shows with a review in force. The store keeps the rows
(:mod:`storage.reviews`, an audit trail that is only ever added to); everything that
decides is here.

- :class:`Reviewers`: the reviewers named in ``[service] reviewers`` (``"telegram:123"``),
  kept only as HMACs of the platform and user id, as every id is.
- :func:`add_review`: a review checked against the rules (:class:`ReviewRefused`, typed,
  worded by :func:`bots.render.sentences.review_refusal`) and stored with the cards it
  makes due, in one write transaction. A review is of an original check: one asked of a
  repeat is stored against the check it repeats, as votes are. A chat's moderator
  reviews for that chat, and may not call a likely scam true; a reviewer the settings
  name, or the operator, for every chat. Reviews are limited per reviewer
  (:data:`PER_REVIEWER` in :data:`REVIEW_WINDOW`) and per check and chat
  (:data:`PER_CHECK`): a flurry of flips never becomes a flurry of updates.
- :func:`apply_review`: the report a check shows with a review in force (the card,
  ``zofia show`` and the report page word it from ``Report.review``); the stored report
  stays the machine's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from storage.keys import hash_user, storable_text
from storage.reviews import Review
from storage.store import CheckStore
from zofia_engine.report import OUTCOMES, Confidence, Lean, Report, ReviewInForce
from zofia_engine.text import without_format

from .records import MAX_LINK, MAX_NOTE, CheckNotFoundError, QueueDue
from .refusals import ReviewRefusal, ReviewRefused

__all__ = [
    "PER_CHECK",
    "PER_REVIEWER",
    "REVIEW_WINDOW",
    "Reviewers",
    "add_review",
    "apply_review",
]

#: how many reviews one reviewer may save in :data:`REVIEW_WINDOW`
PER_REVIEWER = 6
#: how many reviews of one check one chat (or the service) may save in the window
PER_CHECK = 2
REVIEW_WINDOW = dt.timedelta(minutes=10)


class Reviewers:
    """The reviewers the settings name, each ``"platform:user id"``, kept as HMACs.

    Args:
        named: the ``[service] reviewers`` entries.
        secret: the key of the stored identities.

    Attributes:
        hashes: the reviewers' HMACs (:func:`~storage.keys.hash_user`), the only form in
            which the process keeps them: never the ids themselves.
    """

    def __init__(self, named: Iterable[str], secret: bytes) -> None:
        self._secret = secret
        self.hashes = frozenset(hash_user(secret, *entry.strip().split(":", 1)) for entry in named)

    def named(self, platform: str, user_id: str) -> bool:
        """Whether the settings name this user of ``platform`` a reviewer."""
        return hash_user(self._secret, platform, user_id) in self.hashes


# A note or link is shown in other people's chats, so it shows what it says: without the
# characters that hide or reorder text (format characters: zero-width spaces and joiners,
# direction marks, embeddings, overrides and isolates), taken out here, where every
# review enters, before its length and its form are judged.


def _clean_note(note: str) -> str:
    cleaned = " ".join(without_format(storable_text(note)).split())
    if len(cleaned) > MAX_NOTE:
        raise ReviewRefused("note_too_long", limit=MAX_NOTE)
    return cleaned


def _clean_link(link: str) -> str:
    cleaned = without_format(storable_text(link)).strip()
    if cleaned and (not cleaned.startswith(("https://", "http://")) or len(cleaned.split()) > 1):
        raise ReviewRefused("not_a_link")
    if len(cleaned) > MAX_LINK:
        raise ReviewRefused("link_too_long", limit=MAX_LINK)
    return cleaned


def add_review(store: CheckStore, review: Review, queue_due: QueueDue) -> Review:
    """Store ``review`` (its check, reviewer, platform, chat, ``to_verdict``, note and
    link; the rest is the store's) of an original check, or of the check a repeat
    repeats, and make due the cards it changes (only its chat's, for a chat's review),
    in one write transaction (blocking): the limits and the verdict it changes are read
    in the write that adds it, so a burst passes them no further than one at a time.

    Raises:
        ReviewRefused: an unknown verdict, a long note, a link that is no address, no
            verdict to review, a chat's moderator calling a likely scam true, or a limit.
        CheckNotFoundError: no such check.
    """
    if review.to_verdict not in OUTCOMES:
        raise ReviewRefused("unknown_verdict")
    review = replace(review, note=_clean_note(review.note), link=_clean_link(review.link))
    with store.write():
        row = store.checks.get(review.check_id)
        if row is None:
            raise CheckNotFoundError(f"no check {review.check_id!r}")
        review = replace(review, check_id=row.repeat_of or row.id)
        if review.platform != "cli":  # the operator, at the terminal, is not limited
            _refuse_if_limited(store, review)
        review = store.reviews.add(replace(review, from_verdict=_in_force(store, review)))
        scope = None if review.everywhere else (review.platform, review.chat)
        queue_due(store.shown_cards.mark_due(review.check_id, scope))
    return review


def _in_force(store: CheckStore, review: Review) -> str:
    """The verdict ``review`` changes: the latest review's where it applies, else the
    machine's; read in the write that adds it.

    Raises:
        ReviewRefused: the check has no verdict, or a chat's moderator calls a likely
            scam true.
    """
    report = store.reports.get(review.check_id)
    if report is None:
        raise ReviewRefused("no_verdict")
    if review.chat and report.verdict == "scam" and review.to_verdict == "true":
        raise ReviewRefused("scam_called_true")
    before = store.reviews.latest(review.check_id, None if review.everywhere else _scope(review))
    return before.to_verdict if before is not None else report.verdict


def _scope(review: Review) -> tuple[str, str]:
    return (review.platform, review.chat)


def _refuse_if_limited(store: CheckStore, review: Review) -> None:
    """The limits: :data:`PER_REVIEWER` a reviewer, :data:`PER_CHECK` a check in a chat,
    each in :data:`REVIEW_WINDOW`."""
    now = store.clock()
    since = now - REVIEW_WINDOW
    limits: list[tuple[list[dt.datetime], int, ReviewRefusal]] = [
        (store.reviews.recent(since, reviewer=review.reviewer), PER_REVIEWER, "reviewer_limit"),
        (
            store.reviews.recent(since, check=(review.check_id, review.chat)),
            PER_CHECK,
            "check_limit",
        ),
    ]
    for times, limit, kind in limits:
        if len(times) >= limit:
            wait = (times[0] + REVIEW_WINDOW - now).total_seconds()
            raise ReviewRefused(kind, limit=limit, retry_after_s=max(1.0, wait))


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
