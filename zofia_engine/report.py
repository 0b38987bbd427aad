"""The report: everything one check produced, as plain typed records.

``Report`` is what the engine returns, what storage keeps and what the
renderers turn into a verdict card. It round-trips through JSON unchanged,
and its top-level keys are the ones ``zofia check --json`` prints.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .records.audio import Transcript
from .records.debate import Debate, DebateTurn, JudgeRuling, Outcome, StepStatus, modern
from .records.images import ImageFinding
from .records.notes import Note
from .records.reading import AnswerReading, PartCheck, SearchRound, SecondReading
from .records.review import ReviewInForce
from .records.stage1 import Keyword
from .records.usage import LLMCall, RoleUsage, Usage

__all__ = [
    "LABEL_LEAD",
    "OUTCOMES",
    "TRIAGED",
    "Analyses",
    "AnswerReading",
    "ClaimResult",
    "Confidence",
    "Credibility",
    "Debate",
    "DebateTurn",
    "Dropped",
    "EvidenceItem",
    "ExpertFinding",
    "JudgeRuling",
    "LLMCall",
    "Lean",
    "LinguistFinding",
    "Note",
    "Outcome",
    "PartCheck",
    "Quote",
    "Report",
    "ReviewInForce",
    "RoleUsage",
    "SearchRound",
    "SecondReading",
    "Stance",
    "TreeSummary",
    "Triage",
    "Usage",
    "Verdict",
]

OUTCOMES: tuple[Outcome, ...] = ("true", "false", "misleading", "unproven")
#: A check's verdict: an outcome; ``undetermined`` when no ruling could be made (the
#: judge's model failed); or, when triage found nothing to check, what it found instead.
Verdict = Literal[
    "true", "false", "misleading", "unproven", "undetermined", "no_claim", "satire", "scam"
]
TRIAGED: tuple[str, ...] = ("no_claim", "satire", "scam")
# Each source class in words (:attr:`Credibility.words`).
_QUALITY_WORDS = {
    "high": "high quality",
    "medium": "medium quality",
    "low": "low quality",
    "fact-checker": "fact-checker",
    "satire": "satire site",
    "unknown": "unrated source",
}
#: The provider of a label item that is only words read from the post's image (OCR).
LABEL_LEAD = "ocr"
# How reports stored before the review was a field marked it among their notes.
_REVIEW_MARK = "moderator review: "


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Credibility(_Record):
    """How far a document's source can be trusted: its domain, the domain's news quality
    rating (Lin et al. 2023, 0 lowest to 1 highest; ``None`` when unrated) and its class."""

    domain: str
    quality: float | None = None
    label: Literal["high", "medium", "low", "fact-checker", "satire", "unknown"] = "unknown"

    @property
    def words(self) -> str:
        """The class in words, as the panel reads it and a reader sees it."""
        return _QUALITY_WORDS[self.label]


class Stance(_Record):
    """Which way a document goes on the post's core claim, and the sentence that shows it
    (found word for word in the document; empty when none was)."""

    label: Literal["supports", "refutes", "neutral"]
    sentence: str = ""
    status: StepStatus = "ok"
    error: str = ""


class EvidenceItem(_Record):
    """One retrieved document. ``id`` (``fc-1``, ``web-1``, ``wiki-2``) is what agents
    cite. ``query`` says which web query found it (the paper's conjunctive one, or the
    counter-evidence one); a published fact-check (``source = "factcheck"``) carries
    its publisher, its rating and the day it was published; a finding on the post's own
    image (``source = "image"``, ``img-1-label`` …) the outcome it points to as its
    ``rating``. ``reversed`` marks support
    from a source whose support counts against the post (AgentFact's reverse use)."""

    id: str
    source: Literal["web", "wikipedia", "factcheck", "image"]
    provider: str
    title: str
    url: str
    text: str
    published: dt.date | None = None
    query: Literal["main", "counter", "planned"] = "main"
    stance: Stance | None = None
    credibility: Credibility | None = None
    publisher: str = ""
    rating: str = ""
    reversed: bool = False

    @property
    def label_lead(self) -> bool:
        """Words printed on the post's image that point to an outcome: shown to the
        panel and the reader as a lead, never a basis (:mod:`zofia_engine.images.grounds`)."""
        return self.source == "image" and self.provider == LABEL_LEAD and bool(self.rating)


class Quote(_Record):
    """A verbatim excerpt a claim verifier cited, found in ``evidence_id``'s text."""

    text: str
    evidence_id: str


class ClaimResult(_Record):
    """One claim (eq. 8) and its reading against the evidence's sentences (eq. 9).
    ``sentence`` is the number (from 1) of the post's sentence it was taken from.

    In ToE's tree of claims a claim is a node: ``parent`` is its parent's id (``None``
    for the root, the core claim), ``dimension`` what it checks and ``importance`` its
    weight among its siblings; ``veracity`` and ``reliability`` are its own judgement
    over its evidence, ``tree_veracity`` and ``tree_reliability`` those aggregated
    from its children (its own when it has none)."""

    id: str
    kind: Literal["core", "sub"]
    text: str
    sentence: int | None = None
    parent: str | None = None
    depth: int = 0
    dimension: str = ""
    importance: float | None = None
    veracity: float | None = None
    reliability: float | None = None
    tree_veracity: float | None = None
    tree_reliability: float | None = None
    label: Literal["supports", "refutes", "not enough information"] | None = None
    reason: str = ""
    quotes: list[Quote] = []
    dropped_quotes: int = 0
    context: list[str] = Field(default=[], description="evidence ids of the passages used")
    status: StepStatus = "ok"
    error: str = ""
    # How it was read: part by part (``parts``; ``restated`` is the model's probability
    # that the passage says the claim with the passage's own words in its parts), as
    # a whole by the stance reader, or against a fact-checker's answer to it (``answer``;
    # ``restated`` is the model's probability that the answer's findings show the claim
    # is so); ``subject`` is what the claim is about.
    read_by: Literal["parts", "stance", "answer", ""] = ""
    subject: str = ""
    parts: list[PartCheck] = []
    restated: float | None = None
    # The second reading a part-by-part settlement needs (``None``: not asked).
    second: SecondReading | None = None
    # The readings of a fact-checker's answer (``None``: the evidence held none for it).
    answer: AnswerReading | None = None


class LinguistFinding(_Record):
    """One linguistic dimension, judged in its own conversation."""

    dimension: str
    analysis: str = ""
    lean: Literal["real", "fake"] | None = None
    status: StepStatus = "ok"
    error: str = ""


class ExpertFinding(_Record):
    """The domain expert's two-part analysis (paper §4.1.2)."""

    domain: str = ""
    expert_role: str = ""
    knowledge_concordance: str = ""
    logical_integrity: str = ""
    lean: Literal["real", "fake"] | None = None
    status: StepStatus = "ok"
    error: str = ""


class Analyses(_Record):
    """The linguist's findings and the domain expert's. ``held`` is false when the panel
    was not asked: at the adaptive depth, the evidence settled none of the claims."""

    linguist: list[LinguistFinding] = []
    expert: ExpertFinding | None = None
    held: bool = True


class Dropped(_Record):
    """What the check set aside as unfounded, counted: claims the extractor wrote that no
    sentence of the post makes; cited sentence numbers out of range or not about their
    claim; phrases the panel put in quotation marks that occur in neither the post nor
    the evidence; and debate texts that repeated what the debate had already shown."""

    claims: int = 0
    citations: int = 0
    quotes: int = 0
    repeats: int = 0


class Confidence(_Record):
    """How sure the verdict is, and from what (``source``): ``reading``, how often a
    claim read the way the core claim was read was right on the project's labelled
    claims (the verdict follows that reading); ``judge``, the judge's token probability
    of its outcome. ``value`` is ``None`` when neither is known; ``basis`` says why in
    words."""

    value: float | None = None
    basis: str = ""
    source: Literal["reading", "judge", ""] = ""


class Triage(_Record):
    """What the post is, decided before any evidence is sought: only a checkable claim
    gets the full check; the signs say why a post looks like a scam."""

    kind: Literal["claim", "no_claim", "satire", "scam"]
    reason: str = ""
    signs: list[str] = []
    # The model's token probability of the kind it named (None without probabilities);
    # overruled is the kind it named when that probability was too low to skip a check.
    probability: float | None = None
    overruled: str = ""
    status: StepStatus = "ok"
    error: str = ""


class Lean(_Record):
    """Which way the panel leaned when the evidence could not carry a verdict, how
    strongly (the judge's probability, ``None`` without token probabilities), and what
    would settle it. ``against_evidence`` marks a panel that ruled against what the
    evidence settled: the verdict is then the evidence's, and the lean the panel's."""

    outcome: Literal["true", "false", "misleading"]
    probability: float | None = None
    settle: str = ""
    against_evidence: bool = False


class TreeSummary(_Record):
    """ToE's tree of claims, at its root: the aggregated veracity v and reliability r, the
    decision they map to (v < 0.4 false, v > 0.6 true, else none), how many node
    judgements it took, and why it stopped (the root was decisive, it converged, the
    budget of judgements was spent, or nothing was left to split)."""

    veracity: float | None = None
    reliability: float | None = None
    decision: Literal["true", "false"] | None = None
    evaluations: int = 0
    stopped_by: Literal["decisive", "converged", "budget", "exhausted", ""] = ""


class Report(_Record):
    """The outcome of one check.

    ``verdict`` is ``undetermined`` only when no ruling could be made (the
    judge's model failed); ``degraded`` then says what failed. ``basis`` lists what
    a ``true``, ``false`` or ``misleading`` verdict rests on (claim ids whose quotes
    were found in the evidence, published fact-checks, findings on the post's image
    that point to that outcome); with none, the verdict is ``unproven`` and ``lean``
    says which way the panel leaned. ``images`` holds what was read and found in each
    image of the post (never the image), ``heard`` what was heard in its voice note
    (never the sound); ``caption`` is false when all the text checked was read from
    them or heard. ``dropped`` counts what was set aside as unfounded;
    ``depth`` is how far the panel went (``[agents] depth``): ``adaptive`` holds the
    full debate only when the evidence settled something. ``searches`` are the rounds of
    searching again for a core claim the first search left unsettled. ``complete`` is
    false on the early report of a verdict the evidence fixed before the debate
    (``verdict_ready``): verdict, confidence, summary and evidence are final; the debate
    and the panel's explanation are still being written.
    """

    verdict: Verdict
    confidence: Confidence = Confidence()
    summary: str = ""
    keywords: list[Keyword] = []
    evidence: list[EvidenceItem] = []
    claims: list[ClaimResult] = []
    analyses: Analyses = Analyses()
    debate: Debate = Debate()
    usage: Usage = Usage()
    timings: dict[str, float] = {}
    notes: list[Note] = []
    basis: list[str] = []
    lean: Lean | None = None
    triage: Triage | None = None
    search_mode: Literal["paper", "live"] | None = None
    tree: TreeSummary | None = None
    images: list[ImageFinding] = []
    caption: bool = True
    heard: Transcript | None = None
    dropped: Dropped = Dropped()
    depth: Literal["adaptive", "full"] = "full"
    searches: list[SearchRound] = []
    review: ReviewInForce | None = None
    complete: bool = True

    @property
    def degraded(self) -> list[str]:
        """What did not go to plan, in words (``notes``' texts), for logs and the full
        report; renderers read the notes' kinds and numbers."""
        return [n.text for n in self.notes]

    @field_validator("verdict", mode="before")
    @classmethod
    def _legacy(cls, value: object) -> object:
        return modern(value)

    @model_validator(mode="before")
    @classmethod
    def _legacy_notes(cls, data: object) -> object:
        """Reports stored before the notes were typed kept them as ``degraded`` words,
        a moderator's review among them as a marked JSON string: read as notes of no
        kind a renderer reads, and the review as the record it is."""
        if not isinstance(data, dict) or "degraded" not in data:
            return data
        data = dict(data)
        notes, review = [], None
        for text in data.pop("degraded") or []:
            if isinstance(text, str) and text.startswith(_REVIEW_MARK):
                review = json.loads(text.removeprefix(_REVIEW_MARK))
            else:
                notes.append({"kind": "other", "text": text})
        data.setdefault("notes", notes)
        if review is not None:
            data.setdefault("review", review)
        return data
