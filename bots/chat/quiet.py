"""What a group's auto-check answers: the card, a reaction, or nothing.

Tiplines reply in groups only to confirmed misinformation: a reply interrupts the
discussion. So a check nobody asked for (a post forwarded into a group with auto-check
on) gets the full card only for a ``false`` or ``misleading`` verdict, or a scam, the
panel is at least the chat's ``quiet_min_confidence`` sure of, or for a repeat of a post
a moderator reviewed to false or misleading. Any other verdict gets one reaction on the
post (the bot looked; nothing alarming), and an opinion, a greeting or satire nothing
at all. A check someone asked for always gets the card.

The rule is written once here, for the live check and the deliver job alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from zofia_engine.report import Report

from .setting_refusals import NOT_A_PERCENTAGE, PERCENTAGE_OUT_OF_RANGE, SettingRefused

__all__ = [
    "ALARMS",
    "DEFAULT_MIN_CONFIDENCE",
    "QUIET_MIN_CONFIDENCE",
    "QUIET_UNASKED",
    "GroupAnswer",
    "group_answer",
    "min_confidence_of",
    "parse_min_confidence",
    "unasked_gets_card",
]

#: what an unasked check keeps to itself entirely
QUIET_UNASKED = ("no_claim", "satire")
#: the verdicts an unasked check answers with a card (when sure enough)
ALARMS = ("false", "misleading")
#: the chat setting: the least confidence an unasked card needs
QUIET_MIN_CONFIDENCE = "quiet_min_confidence"
DEFAULT_MIN_CONFIDENCE = 0.6

GroupAnswer = Literal["card", "reaction", "nothing"]


def group_answer(report: Report, min_confidence: float) -> GroupAnswer:
    """What an unasked check of ``report`` shows in its group.

    ``"card"`` for a ``false`` or ``misleading`` verdict whose confidence is at least
    ``min_confidence``, for a scam whose triage was that sure, and for any verdict a
    moderator's review in force made (or confirmed) false or misleading; ``"nothing"``
    for an opinion, a greeting or satire; ``"reaction"`` for everything else (a true or
    unproven post, an unsure alarm, no verdict).

    A confidence the backend could not measure (no token probabilities) holds nothing
    back: the verdict itself is then all there is to go on (a false or misleading one
    rests on quotes found in the evidence).
    """
    verdict = report.verdict
    if verdict in QUIET_UNASKED:
        return "nothing"
    review = report.review
    if review is not None and verdict in ALARMS:  # a moderator's word needs no confidence
        return "card"
    if verdict in ALARMS:
        sure = report.confidence.value
    elif verdict == "scam" or (report.triage is not None and report.triage.kind == "scam"):
        sure = report.triage.probability if report.triage is not None else None
    else:
        return "reaction"
    return "card" if sure is None or sure >= min_confidence else "reaction"


async def unasked_gets_card(
    report: Report, min_confidence: float, react: Callable[[], Awaitable[None]] | None
) -> bool:
    """Whether an unasked check of ``report`` gets its card (:func:`group_answer`); one
    answered with a reaction gets it here, from ``react`` (the platform's quiet answer,
    which never raises; ``None``: none), and then no card, as one answered with nothing."""
    answer = group_answer(report, min_confidence)
    if answer == "reaction" and react is not None:
        await react()
    return answer == "card"


def min_confidence_of(value: Any) -> float:
    """A stored ``quiet_min_confidence`` (a chat setting, a deliver job's target) as a
    number from 0 to 1; anything else is the default."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return DEFAULT_MIN_CONFIDENCE
    return float(value) if 0.0 <= value <= 1.0 else DEFAULT_MIN_CONFIDENCE


def parse_min_confidence(text: str) -> float:
    """What a chat admin typed as the least confidence: ``70%``, ``70`` or ``0.7``.

    Raises:
        SettingRefused: not a number from 0 to 100 percent, in one sentence.
    """
    cleaned = text.strip().removesuffix("%").strip()
    try:
        value = float(cleaned)
    except ValueError:
        raise SettingRefused(NOT_A_PERCENTAGE, example="70%", text=repr(text)) from None
    if value > 1 or text.strip().endswith("%"):
        value /= 100
    if not 0.0 <= value <= 1.0:  # also refuses nan
        raise SettingRefused(PERCENTAGE_OUT_OF_RANGE, least="0%", most="100%", text=repr(text))
    return round(value, 4)
