"""No verdict without evidence: the rule that turns the judge's ruling into the verdict.

``true``, ``false`` or ``misleading`` stands only when at least one claim was
supported or refuted by a sentence of the retrieved evidence that its reading cited
(or a published fact-check matched the post). Otherwise the verdict is ``unproven``, the
way AgentFact reads an absence of evidence, and the report keeps which way the panel
leaned, how strongly, and what would settle it. A quote from a low-quality or satire
source carries no support (AgentFact's reverse use: such a source agreeing with a post
is a warning sign), so pages written to rank can never be the only ground of ``true``.
Nor can words printed on the post's image: a screenshot stamped "FACT CHECK: TRUE" is
the post talking about itself; and a vision model's finding on the image grounds
``misleading`` at most, never ``false``
(:func:`~zofia_engine.images.grounds.image_basis`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..images.grounds import image_basis
from ..report import (
    OUTCOMES,
    ClaimResult,
    Confidence,
    EvidenceItem,
    JudgeRuling,
    Lean,
    Outcome,
    Verdict,
)
from ..retrieval.credibility import counts_against
from .confidence import reading_confidence

__all__ = [
    "ALLOWED",
    "FOLLOWS",
    "Ruled",
    "allowed_outcomes",
    "can_settle",
    "grounded_claims",
    "in_sentence",
    "rule_on_evidence",
    "settled_core",
    "verdict_of",
]


@dataclass(frozen=True)
class Ruled:
    """The verdict, what it rests on, and (for ``unproven``) the panel's lean."""

    verdict: Verdict
    basis: list[str]
    lean: Lean | None = None
    overruled: bool = False  # the judge ruled against the core claim the evidence settled


def grounded_claims(
    claims: Sequence[ClaimResult], evidence: Sequence[EvidenceItem] = ()
) -> list[str]:
    """Ids of the claims supported or refuted by a quote found in the evidence; a
    supporting quote counts only from a source whose support is not reversed."""
    sources = {item.id: item.credibility for item in evidence}

    def counts(claim: ClaimResult) -> bool:
        if claim.label == "refutes":
            return bool(claim.quotes)
        rated = [sources.get(q.evidence_id) for q in claim.quotes]
        return any(c is None or not counts_against("supports", c) for c in rated)

    return [
        c.id
        for c in claims
        if c.label in ("supports", "refutes") and c.quotes and c.status == "ok" and counts(c)
    ]


def can_settle(grounded: Collection[str], evidence: Sequence[EvidenceItem]) -> bool:
    """Whether anything found can carry a verdict: a published fact-check, a finding on
    the post's image that can be a basis (:func:`image_basis`; never words printed on
    it alone), or a claim settled by the evidence (``grounded``: the ids
    :func:`grounded_claims` gives)."""
    return bool(grounded) or any(
        item.source == "factcheck" or image_basis(item) for item in evidence
    )


# Words that start a sentence without being a name: lower-cased inside another sentence.
_OPENERS = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "there",
        "it",
        "its",
        "some",
        "many",
        "most",
        "all",
        "no",
        "every",
        "each",
        "one",
        "two",
        "three",
        "several",
        "few",
        "his",
        "her",
        "their",
        "our",
        "my",
        "your",
        "we",
        "they",
        "he",
        "she",
        "i",
        "you",
        "what",
        "in",
        "on",
        "at",
        "after",
        "before",
        "since",
        "during",
        "for",
        "from",
        "more",
        "less",
        "fewer",
        "only",
        "both",
        "any",
        "none",
        "nobody",
        "nothing",
        "everyone",
        "someone",
        "four",
        "five",
        "half",
        "if",
        "when",
    ]
)


# The first word of a claim, after any opening quotation mark or bracket ("It's" → "It").
_FIRST_WORD = re.compile(r"[^\w]*?([^\W\d_]+)")
# A claim's closing full stop, also inside a closing quotation mark ("… fake.”" → "… fake”").
_FULL_STOP = re.compile(r"\.+([\"'”’)]*)$")


def in_sentence(claim: str) -> str:
    """``claim`` as it reads inside another sentence: its full stop gone, and its first
    word in lower case only when it is one of the words that open a sentence without
    being a name (``_OPENERS``): "The city …" → "the city …", "“This is …" → "“this
    is …", while "Apple …", "NASA …" and "I …" keep their case."""
    text = _FULL_STOP.sub(r"\1", " ".join(claim.split()))
    found = _FIRST_WORD.match(text)
    if found is None:
        return text
    first = found.group(1)
    shouted = len(first) > 1 and first.isupper()  # "NASA", not a sentence opener
    if first.casefold() in _OPENERS and first != "I" and first[:1].isupper() and not shouted:
        start = found.start(1)
        text = text[:start] + first[0].lower() + text[start + 1 :]
    return text


def _settle(claims: Sequence[ClaimResult]) -> str:
    core = next((c.text for c in claims if c.kind == "core" and c.text), "")
    if core:
        return f"A trustworthy source that confirms or denies that {in_sentence(core)}."
    return "A trustworthy source that reports on what the post claims."


# The claim labels that can carry each outcome (a "misleading" post may be right in
# some facts and wrong in others).
_CARRIES = {
    "true": ("supports",),
    "false": ("refutes",),
    "misleading": ("supports", "refutes"),
}
#: What a settled core claim allows the panel to rule, and what it rules itself when the
#: panel rules otherwise: a refuted core claim is never "true", a supported one never
#: "false".
ALLOWED: dict[str, tuple[Outcome, ...]] = {
    "refutes": ("false", "misleading"),
    "supports": ("true", "misleading"),
}
#: The verdict a settled core claim gives by itself.
FOLLOWS: dict[str, Verdict] = {"refutes": "false", "supports": "true"}


def settled_core(claims: Sequence[ClaimResult], grounded: Collection[str]) -> ClaimResult | None:
    """The core claim, when the evidence settled it (its id in ``grounded``)."""
    core = next((c for c in claims if c.kind == "core"), None)
    if core is None or core.id not in grounded or core.label not in FOLLOWS:
        return None
    return core


def allowed_outcomes(
    claims: Sequence[ClaimResult], grounded: Collection[str]
) -> tuple[Outcome, ...]:
    """The outcomes the panel may rule: those a settled core claim allows, else all.

    "Misleading" (right in some facts, wrong or missing context in others) needs
    evidence that goes both ways: another claim settled the other way than the core
    claim. Without it the core claim's own outcome is the only one: the packaged judge
    called a post with one wrong place "misleading" at 0.87 (docs/verdicts.md)."""
    core = settled_core(claims, grounded)
    if core is None or core.label is None:
        return OUTCOMES
    other = "supports" if core.label == "refutes" else "refutes"
    mixed = any(c.id in grounded and c.label == other for c in claims if c.id != core.id)
    return ALLOWED[core.label] if mixed else (FOLLOWS[core.label],)  # type: ignore[return-value]


def decided_by_evidence(
    claims: Sequence[ClaimResult],
    evidence: Sequence[EvidenceItem],
    grounded: Collection[str],
    *,
    require_evidence: bool = True,
) -> Outcome | None:
    """The verdict the evidence fixes whatever the panel rules, once the claims are read:
    the one outcome a settled core claim allows (:func:`allowed_outcomes`), or
    ``unproven`` when the claims were read and nothing found can carry any verdict
    (:func:`can_settle`). ``None`` when the judge's ruling decides: the evidence allows
    more than one outcome, no claim could be read (a model that failed), or
    ``require_evidence`` is off (the paper's rule: the judge's outcome stands)."""
    if not require_evidence or not any(c.status == "ok" for c in claims):
        return None  # the judge's rule, or no reading at all: nothing the evidence fixed
    if settled_core(claims, grounded) is not None:
        allowed = allowed_outcomes(claims, grounded)
        return allowed[0] if len(allowed) == 1 else None
    return None if can_settle(grounded, evidence) else "unproven"


def rule_on_evidence(
    outcome: str,
    probability: float | None,
    claims: Sequence[ClaimResult],
    evidence: Sequence[EvidenceItem] = (),
    *,
    require_evidence: bool = True,
    grounded: Collection[str] | None = None,
) -> Ruled:
    """The verdict for the judge's ``outcome`` (``probability``: the judge's, if known).

    A core claim the evidence settled decides first: the judge's outcome stands only
    among those it allows (:func:`allowed_outcomes`); any other ruling gives way to the
    evidence's own ("false" for a refuted core claim, "true" for a supported one), and
    the report keeps the panel's ruling as a lean against the evidence.

    Otherwise the judge's outcome stands only on evidence that goes its way: claims
    supported for ``true``, refuted for ``false``, either for ``misleading``, a
    published fact-check, or a finding on the post's image that can be a basis for
    it (never for ``true``, and never words printed on the image alone). Else it is
    ``unproven``, with the judge's outcome as the panel's lean.

    Args:
        claims: the read claims.
        evidence: the check's evidence: its published fact-checks count as a basis,
            and so do findings on the post's image that point to ``outcome``; its
            sources' credibility decides whose support counts.
        require_evidence: off, the judge's outcome stands as it is (the paper's rule).
        grounded: :func:`grounded_claims` of ``claims`` and ``evidence``, when the check
            has it already; else it is worked out here.
    """
    grounded = set(grounded_claims(claims, evidence) if grounded is None else grounded)
    fact_checks = [item.id for item in evidence if item.source == "factcheck"]
    carries = _CARRIES.get(outcome, ())
    images = [i.id for i in evidence if image_basis(i) == outcome]
    backing = [c.id for c in claims if c.id in grounded and c.label in carries]
    basis = [*fact_checks, *images, *backing]
    if outcome not in ("true", "false", "misleading", "unproven"):
        return Ruled(outcome, basis)  # type: ignore[arg-type]
    if not require_evidence:
        return Ruled(outcome, basis)  # type: ignore[arg-type]
    core = settled_core(claims, grounded)
    if core is not None and core.label is not None:
        if outcome in allowed_outcomes(claims, grounded):
            return Ruled(outcome, basis)
        follows = FOLLOWS[core.label]
        against = [c.id for c in claims if c.id in grounded and c.label in _CARRIES[follows]]
        lean = None
        if outcome in ("true", "false", "misleading"):
            lean = Lean(outcome=outcome, probability=probability, against_evidence=True)
        return Ruled(follows, [*fact_checks, *against], lean, overruled=True)
    if basis and outcome != "unproven":
        return Ruled(outcome, basis)  # type: ignore[arg-type]
    if outcome == "unproven":
        return Ruled("unproven", basis)
    lean = Lean(outcome=outcome, probability=probability, settle=_settle(claims))
    return Ruled("unproven", [], lean)


def verdict_of(
    ruling: JudgeRuling,
    outcomes: dict[str, float] | None,
    claims: Sequence[ClaimResult],
    evidence: Sequence[EvidenceItem],
    *,
    require_evidence: bool,
    no_logprobs: bool,
    grounded: Collection[str] | None = None,
) -> tuple[Ruled, Confidence]:
    """The verdict the judge's final ``ruling`` and the evidence allow, and how sure it
    is: the calibrated confidence of the core claim's reading when the verdict follows
    it, else the judge's probability of its outcome (``None`` with the reason);
    ``grounded`` as for :func:`rule_on_evidence`. Without a ruling (the judge failed)
    the verdict is the one the evidence fixed (:func:`decided_by_evidence`), so that a
    verdict shown before the debate ends never changes."""
    grounded = set(grounded_claims(claims, evidence) if grounded is None else grounded)
    outcome = ruling.decision if ruling.decision in OUTCOMES else None
    if outcome is None:  # no ruling: the verdict the evidence fixed, if it fixed one
        outcome = decided_by_evidence(claims, evidence, grounded, require_evidence=require_evidence)
    if outcome is None:
        return Ruled("undetermined", []), Confidence(basis="unavailable: no ruling was made")
    probability = outcomes.get(outcome) if outcomes else None
    ruled = rule_on_evidence(
        outcome, probability, claims, evidence, require_evidence=require_evidence, grounded=grounded
    )
    core = settled_core(claims, grounded) if require_evidence else None
    if core is not None and ruled.verdict == FOLLOWS.get(core.label or ""):
        read = reading_confidence(core)
        if read is not None:
            return ruled, read
    if ruled.verdict != outcome:
        if ruled.verdict == "unproven":
            why = f"unproven: the judge ruled {outcome}, but nothing the evidence settled backs it"
        else:
            why = f"the evidence settled it; the judge ruled {outcome}"
        return ruled, Confidence(basis=why)
    if ruled.verdict == "unproven":
        return ruled, Confidence(basis="unproven: the evidence settled none of it")
    if probability is None:
        why = (
            "the backend gives no token probabilities"
            if no_logprobs
            else "the outcome's token was not among the returned probabilities"
        )
        return ruled, Confidence(basis=f"unavailable: {why}")
    return ruled, Confidence(
        value=probability, basis="the judge's token probability of it", source="judge"
    )
