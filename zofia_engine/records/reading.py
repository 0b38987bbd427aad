"""How a claim was read against the evidence, part by part (the claim reader's record).

A :class:`PartCheck` is one checkable part of a claim (a place, a person, a date …):
what the claim says, what the passage says for it (its own words; empty when it does
not say), how the two compare, and how sure the model was that the passage states it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "AnswerReading",
    "PartCheck",
    "PartKind",
    "PartOutcome",
    "SearchRound",
    "SecondReading",
]

PartKind = Literal[
    "place",
    "person",
    "organisation",
    "nationality",
    "date",
    "number",
    "name",
    "category",
    "ordinal",
]
#: ``agrees``: the passage says the same; ``differs``: it says something that cannot be
#: the same; ``unstated``: it does not say, or says it about something else.
PartOutcome = Literal["agrees", "differs", "unstated"]


class PartCheck(BaseModel):
    """One checkable part of a claim, read against one passage. ``evidence_id`` names
    the document whose sentence gave ``found``; ``stated`` is the model's probability
    that the passage states this part at all (``None`` without token probabilities or
    when no question was needed)."""

    model_config = ConfigDict(extra="forbid")

    kind: PartKind
    claimed: str
    found: str = ""
    outcome: PartOutcome = "unstated"
    evidence_id: str = ""
    stated: float | None = None


class SecondReading(BaseModel):
    """The second reading of a claim read part by part: whether the sentences about its
    subject hold each claimed value at all (``present``, by its claimed words), and
    whether that agrees with what the part comparison found. A claim settles only when
    it does."""

    model_config = ConfigDict(extra="forbid")

    by: Literal["presence"] = "presence"
    present: list[str] = []
    absent: list[str] = []
    agrees: bool = False


class SearchRound(BaseModel):
    """One round of searching again for a claim the evidence left unsettled: the queries
    planned and run, those not run because they repeated an earlier one, the evidence
    ids of what they found that was new, and whether the claim was settled after it."""

    model_config = ConfigDict(extra="forbid")

    round: int
    queries: list[str] = []
    repeats: list[str] = []
    found: list[str] = []
    settled: bool = False


class AnswerReading(BaseModel):
    """A claim read against a fact-checker's answer to it
    (:mod:`zofia_engine.agents.answers`): what the claim asserts (``kind``: a statement
    attributed to someone, a figure, an event), the answering document and the cosine
    of its closest sentence, and each reading's lean: the whole-claim stance reading's
    (``stance``), the model's yes/no over the answer's findings (``said``: its
    probability that they show the claim is so; ``said_lean``), and for a figure the
    comparison by code (``figures``). ``lean``: where the readings point when they
    agree, or the one that leans; ``agrees``: two readings agree and none disagrees,
    which a claim needs to settle."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["statement", "figure", "event"]
    evidence_id: str
    similarity: float
    stance: Literal["supports", "refutes"] | None = None
    said: float | None = None
    said_lean: Literal["supports", "refutes"] | None = None
    figures: PartOutcome | None = None
    lean: Literal["supports", "refutes"] | None = None
    agrees: bool = False
