"""What a check shows, wherever it is read from the store: a card, a repeat, a deliver
job, a correction, a report page, the API. The engine's report, with the latest review
that applies where the check was asked in force (:func:`~.reviews.apply_review`: a
review by that chat's moderators, or by the service's reviewers), a newer recheck's
word when that is in force, and from another chat only what is shown across chats
(:func:`~storage.other_chats.as_seen_elsewhere`). Each call is blocking: the service
makes it off the event loop."""

from __future__ import annotations

from storage.other_chats import as_seen_elsewhere
from storage.reviews import Scope
from storage.rows import CheckRow
from storage.store import CheckStore
from zofia_engine.report import Report

from .records import CardState, Failed, Outcome
from .reviews import apply_review

__all__ = ["card_state", "report_of", "shown_report"]


def shown_report(
    store: CheckStore, check_id: str, scope: Scope | None = None, *, seen_from: Scope | None = None
) -> Report | None:
    """The report an original check shows where ``scope`` looks (a chat; ``None``: every
    chat's view), with the latest review that applies there in force, and seen from
    ``seen_from`` (by default ``scope``): a chat other than the check's own sees only
    what is shown across chats. ``None`` when the check has no report (yet, or purged)."""
    report = store.reports.get(check_id)
    if report is None:
        return None
    report = apply_review(report, store.reviews.latest(check_id, scope))
    seen_from = seen_from or scope
    if seen_from is not None:
        asked = store.checks.get(check_id)
        if asked is None or (asked.platform, asked.chat) != seen_from:
            return as_seen_elsewhere(report)
    return report


def report_of(
    store: CheckStore, check_id: str, *, in_its_chat: bool = True
) -> tuple[CheckRow, Report] | None:
    """A check and the report it shows: its own, or for a repeat its original's, as its
    chat sees it (``in_its_chat`` false: with the service's reviews only, as a public
    page shows it). ``None`` when there is no such check, or no report (yet, or purged)."""
    row = store.checks.get(check_id)
    if row is None:
        return None
    asked = (row.platform, row.chat) if row.chat else None
    scope = asked if in_its_chat else None
    original = row.repeat_of or row.id
    # A newer recheck of its text, when its word is in force, is what the check shows.
    word = store.shown_cards.word_in_force(original, scope)
    report = shown_report(store, word.check_id if word else original, scope, seen_from=asked)
    return None if report is None else (row, report)


def card_state(
    store: CheckStore, check_id: str, *, seen_from: Scope | None = None
) -> CardState | None:
    """What the card of ``check_id`` shows now, in the chat ``seen_from`` (by default its
    own); ``None`` for an unknown or cancelled check, one not finished, or one whose
    report was purged."""
    row = store.checks.get(check_id)
    if row is None:
        return None
    original = store.checks.get(row.repeat_of) if row.repeat_of else row
    if original is None:
        return None
    if row.status == "failed" or original.status == "failed":
        reason = (row.error or original.error) or "no reason was stored"
        return _state(row, Failed(row.id, f"The check failed: {reason}"))
    if original.status != "done":
        return None
    asked = (row.platform, row.chat) if row.chat else None
    report = shown_report(store, original.id, asked)
    if report is None:
        return None
    if seen_from is not None and asked != seen_from:
        report = as_seen_elsewhere(report)
    if row.repeat_of is None:
        return _state(row, Outcome(row.id, report))
    kind = row.repeat_kind or "exact"
    return _state(row, Outcome(row.id, report, kind, original.id, original.created_at))


def _state(row: CheckRow, outcome: Outcome | Failed) -> CardState:
    return CardState(outcome, row.origin, row.published, row.language)
