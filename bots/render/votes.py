"""A check's vote for a tipline's voting pool: a category and a truth score, from the
report, by one written table (:data:`VOTE_RULES`, shown in docs/api.md).

The categories are those of CheckMate's checkers (bettersg/checkMate): ``info`` is a
message with claims, scored from 1 (entirely false) to 5 (entirely true); the other
categories get no score, as there. A verdict is "sure" when the panel's confidence is
at least :data:`SURE`, or when a moderator's review in force gave it; a confidence the
backend could not measure is not sure. ZoFia's triage tells a scam, satire and a post
with nothing to check (a greeting, an opinion) from a claim; it has no outcome for
``illicit``, ``spam`` or ``legitimate``, so no vote is ever one of those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from zofia_engine.report import Report

__all__ = ["CATEGORIES", "SURE", "VOTE_RULES", "Category", "Vote", "VoteRule", "vote_of"]

Category = Literal[
    "scam", "illicit", "info", "satire", "spam", "legitimate", "irrelevant", "unsure"
]
CATEGORIES: tuple[str, ...] = get_args(Category)
#: the least confidence of a sure verdict (the bots' default for speaking unasked)
SURE = 0.6


@dataclass(frozen=True)
class VoteRule:
    """One line of the table: a verdict (``sure``: ``None`` whatever the confidence)
    and the vote it gives."""

    verdict: str
    sure: bool | None
    category: Category
    truth_score: int | None


VOTE_RULES: tuple[VoteRule, ...] = (
    VoteRule("false", True, "info", 1),
    VoteRule("false", False, "info", 2),
    VoteRule("misleading", None, "info", 3),
    VoteRule("true", False, "info", 4),
    VoteRule("true", True, "info", 5),
    VoteRule("unproven", None, "unsure", None),
    VoteRule("undetermined", None, "unsure", None),
    VoteRule("scam", None, "scam", None),
    VoteRule("satire", None, "satire", None),
    VoteRule("no_claim", None, "irrelevant", None),
)


@dataclass(frozen=True)
class Vote:
    """A report's vote, and what it was read from."""

    category: Category
    truth_score: int | None
    verdict: str
    sure: bool
    reviewed: bool


def vote_of(report: Report) -> Vote:
    """The vote of ``report`` (the verdict in force, a moderator's review included)."""
    reviewed = report.review is not None
    confidence = report.confidence.value
    sure = reviewed or (confidence is not None and confidence >= SURE)
    for rule in VOTE_RULES:
        if rule.verdict == report.verdict and rule.sure in (None, sure):
            return Vote(rule.category, rule.truth_score, report.verdict, sure, reviewed)
    raise ValueError(f"no vote rule for the verdict {report.verdict!r}")  # pragma: no cover
