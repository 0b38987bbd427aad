"""Reading a claim part by part: what a passage about its subject says for each of its
checkable parts, compared by code.

For each claim: its subject and parts (:mod:`.claim`); the evidence sentences about the
same subject, closest first (:mod:`.passage`); what they fill each blank with, and
whether they say the claim with those words in it (:mod:`.questions`); then a comparison
that knows names, places, dates and numbers (:mod:`.names`, :mod:`.values`):

* a part the passage gives differently **refutes** the claim, once the model says the
  passage says the claim with the passage's words in it (``said_at``);
* every part agreeing **supports** it, on the same condition;
* anything else leaves it **not settled**: a part the passage does not answer, a date
  relative to the post, a passage about something else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...llm.session import CheckSession, StepFailed
from ...ports import TextEncoder
from ...records.reading import PartCheck, PartOutcome, SecondReading
from ...report import ClaimResult, EvidenceItem, Quote
from ...retrieval.ner.parser import Parsed, TextParser
from ..context import PanelContext
from ..evidence_sentences import Sentence
from .claim import ClaimParts, Part
from .compare import Comparer
from .names import NameKnowledge, described_as_place
from .passage import Passage, Source, about_subject, can_contradict, choose_passage
from .presence import Held, presence
from .presence import agrees as agrees_with
from .questions import NOT_STATED, Filled, fill_blanks, passage_says

__all__ = ["PartsRules", "about_its_subject", "read_by_parts"]


@dataclass(frozen=True)
class PartsRules:
    """How many sentences make a claim's passage (of how many closest sentences about
    its subject, parsed), the probability of "the passage says
    it" that settles a claim, and the cosine under which two category words are
    different kinds of thing ("mammal", "fish") rather than two words for one
    ("film", "movie")."""

    max_sentences: int = 3
    max_sources: int = 8
    said_at: float = 0.5
    same_kind_at: float = 0.5
    second_reading: str = "presence"
    unsettled_part: str = "presence"


@dataclass(frozen=True)
class _Context:
    session: CheckSession
    panel: PanelContext
    knowledge: NameKnowledge
    comparer: Comparer
    rules: PartsRules


async def read_by_parts(
    session: CheckSession,
    panel: PanelContext,
    claims: Sequence[tuple[ClaimResult, ClaimParts]],
    pool: Sequence[Sentence],
    vectors: np.ndarray,
    *,
    parser: TextParser,
    knowledge: NameKnowledge,
    encoder: TextEncoder,
    rules: PartsRules,
) -> list[ClaimResult]:
    """Each claim read part by part against the evidence sentences about its subject:
    of ``pool`` (every sentence of the evidence that can settle a claim, with its unit
    ``vectors``), the closest :attr:`PartsRules.max_sources` about the subject, parsed
    once for all claims."""
    documents = {e.id: e for e in panel.evidence}
    run = _Context(
        session, panel, knowledge, Comparer(knowledge, encoder, rules.same_kind_at), rules
    )
    about: list[list[int]] = []
    if pool and claims:
        encoded = await asyncio.to_thread(encoder.encode, [c.text for c, _ in claims])
        scores = encoded @ vectors.T
        for row, (_, parts) in zip(scores, claims, strict=True):
            order = [int(j) for j in np.argsort(-row, kind="stable")]
            about.append(
                [j for j in order if _about(parts, pool[j], documents)][: rules.max_sources]
            )
    else:
        about = [[] for _ in claims]
    needed = sorted({j for js in about for j in js})
    parses = dict(
        zip(
            needed,
            await asyncio.to_thread(parser.parse, [pool[j].text for j in needed]),
            strict=True,
        )
    )

    async def one(i: int, claim: ClaimResult, parts: ClaimParts) -> ClaimResult:
        sources = [_source(pool[j], parses[j], documents) for j in about[i]]
        return await _read_one(run, claim, parts, sources)

    return list(await asyncio.gather(*(one(i, c, p) for i, (c, p) in enumerate(claims))))


def _about(parts: ClaimParts, sentence: Sentence, documents: Mapping[str, EvidenceItem]) -> bool:
    item = documents.get(sentence.evidence_id)
    if item is None:
        return False
    return about_subject(parts, item.title, sentence.text, encyclopedic=item.source == "wikipedia")


def _source(sentence: Sentence, parsed: Parsed, documents: Mapping[str, EvidenceItem]) -> Source:
    item = documents[sentence.evidence_id]
    return Source(item.id, item.title, item.source == "wikipedia", sentence.text, parsed)


async def _read_one(
    run: _Context,
    claim: ClaimResult,
    parts: ClaimParts,
    sources: list[Source],
) -> ClaimResult:
    passage = choose_passage(parts, sources, max_sentences=run.rules.max_sentences)
    base = {"read_by": "parts", "subject": parts.subject}
    if passage is None:
        checks = [PartCheck(kind=p.kind, claimed=p.text) for p in parts.parts]
        return _unsettled(claim, parts, checks, base, [])
    try:
        filled = await fill_blanks(
            run.session, run.panel, parts, passage, f"claims:parts:{claim.id}"
        )
    except StepFailed as exc:
        return claim.model_copy(update={**base, "status": "failed", "error": exc.reason})
    held = _held(run, parts, sources)
    checks = _answered_by(run, parts, passage, held, _compared(run, parts, passage, filled))
    context = _ids(passage)
    outcomes = [c.outcome for c in checks if _checked(parts, c)]
    differs = "differs" in outcomes
    agrees = bool(outcomes) and all(o == "agrees" for o in outcomes)
    if not (differs or agrees):
        return _unsettled(claim, parts, checks, base, context)
    answers = {n: f.found for n, f in enumerate(_checked_checks(parts, checks), 1) if f.found}
    said = await passage_says(
        run.session, run.panel, parts.restated(answers), passage, f"claims:said:{claim.id}"
    )
    settled = said is not None and said >= run.rules.said_at
    complete = agrees and _all_held(parts, held)
    label = "refutes" if differs else "supports"
    second = _second(held, label, checks) if held is not None else None
    update = {**base, "restated": said, "second": second}
    if not settled or not (differs or complete) or (second is not None and not second.agrees):
        return _unsettled(claim, parts, checks, update, context)
    deciding = [c for c in checks if c.outcome == ("differs" if differs else "agrees")]
    return claim.model_copy(
        update={
            **update,
            "label": label,
            "reason": _reason(label, deciding),
            "quotes": _quotes(passage, deciding, sources),
            "parts": checks,
            "context": context,
        }
    )


def _held(run: _Context, parts: ClaimParts, sources: list[Source]) -> dict[str, Held] | None:
    """The second reading (:mod:`.presence`): for each part, whether the sentences about
    the subject hold its value; ``None`` when it is off."""
    if run.rules.second_reading == "none":
        return None
    return {p.text: presence(parts, p, sources, run.comparer.compare) for p in parts.parts}


def _all_held(parts: ClaimParts, held: dict[str, Held] | None) -> bool:
    """Whether every part no passage was asked about (a value the claim left out of its
    sentence, a date relative to the post) is held by the sentences about the subject:
    only then can every part of the claim be the same."""
    unasked = [p for p in parts.parts if not p.comparable]
    return not unasked or (
        held is not None and all(held[p.text].status == "present" for p in unasked)
    )


def _answered_by(
    run: _Context,
    parts: ClaimParts,
    passage: Passage,
    held: dict[str, Held] | None,
    checks: list[PartCheck],
) -> list[PartCheck]:
    """``checks``, each part the comparison left unsettled (the model said "not stated",
    or gave a value that neither agrees nor differs) answered by the sentence that holds
    the claim's own value, when ``rules.unsettled_part`` is "presence" (the yes/no and the
    agreement still decide whether that settles anything). A part the model filled with
    a value that differs (set aside by :func:`_guarded`) is not: the model tied another
    value to the claim's relation, and the claimed one may be there for another ("1975
    to 1990", the years of another office)."""
    if held is None or run.rules.unsettled_part != "presence":
        return checks
    by_text = {p.text: p for p in parts.checked}
    out = []
    for check in checks:
        found = held.get(check.claimed)
        part = by_text.get(check.claimed)
        other = (
            bool(check.found)
            and part is not None
            and _compare(run, part, check.found, passage) == "differs"
        )
        if (
            check.outcome == "unstated"
            and not other
            and found is not None
            and found.status == "present"
        ):
            check = check.model_copy(
                update={"found": found.value, "outcome": "agrees", "evidence_id": found.evidence_id}
            )
        out.append(check)
    return out


def _second(held: dict[str, Held], label: str, checks: list[PartCheck]) -> SecondReading:
    """The second reading, and whether it agrees with the comparison's ``label``."""
    return SecondReading(
        present=[k for k, v in held.items() if v.status == "present"],
        absent=[k for k, v in held.items() if v.status == "absent"],
        agrees=agrees_with(label, checks, held),
    )


def _checked(parts: ClaimParts, check: PartCheck) -> bool:
    return any(p.text == check.claimed and p.comparable for p in parts.parts)


def _checked_checks(parts: ClaimParts, checks: list[PartCheck]) -> list[PartCheck]:
    return [c for c in checks if _checked(parts, c)]


def _compared(
    run: _Context, parts: ClaimParts, passage: Passage, filled: Filled
) -> list[PartCheck]:
    """Each part of the claim with what the passage gave for it, compared
    (:func:`_guarded` sets aside differences the answers cannot carry)."""
    checked = parts.checked
    given = dict(zip(checked, zip(filled.answers, filled.stated, strict=True), strict=True))
    answers = [a for a in filled.answers if a != NOT_STATED]
    checks = []
    for part in parts.parts:
        found, stated = given.get(part, (NOT_STATED, None))
        if found == NOT_STATED:
            checks.append(PartCheck(kind=part.kind, claimed=part.text, stated=stated))
            continue
        source = passage.source_of(found)
        evidence = source[0] if source else ""
        outcome = _compare(run, part, found, passage)
        if outcome == "differs":
            i = checked.index(part)
            outcome = _guarded(run, part, found, passage, i, answers.count(found))
        checks.append(
            PartCheck(
                kind=part.kind,
                claimed=part.text,
                found=found,
                outcome=outcome,
                evidence_id=evidence,
                stated=stated,
            )
        )
    return checks


def _guarded(
    run: _Context, part: Part, found: str, passage: Passage, i: int, uses: int
) -> PartOutcome:
    """A difference stands only when the answer can carry it: words of a label that can
    contradict the part (:func:`~.passage.can_contradict`), given for one blank only
    (the same words for two blanks answer neither), and not chosen over the claim's own
    words when the passage has them among the blank's options (it names the claimed
    value: which one fills the blank is then the model's guess, not the passage's)."""
    label = passage.labels[i].get(found, "") if passage.labels else ""
    if part.kind == "place" and described_as_place(found, run.knowledge):
        label = "LOC"  # "Moon", tagged as a person, is described as a satellite
    if not can_contradict(part, label) or uses > 1:
        return "unstated"
    own = [o for o in passage.options[i] if _compare(run, part, o, passage) == "agrees"]
    return "unstated" if own else "differs"


def _compare(run: _Context, part: Part, found: str, passage: Passage) -> PartOutcome:
    return run.comparer.compare(part, found, passage.text)


def _ids(passage: Passage) -> list[str]:
    return list(dict.fromkeys(evidence_id for evidence_id, _ in passage.sources))


def _quotes(passage: Passage, deciding: list[PartCheck], sources: list[Source]) -> list[Quote]:
    """The sentences that gave the deciding values: the passage's, or the sentence
    about the subject the second reading found one in."""
    others = [(s.evidence_id, s.text) for s in sources]
    found = [
        passage.source_of(c.found) or next((o for o in others if c.found in o[1]), None)
        for c in deciding
    ]
    chosen = dict.fromkeys(s for s in found if s is not None)
    return [Quote(text=text, evidence_id=evidence_id) for evidence_id, text in chosen]


def _reason(label: str, deciding: list[PartCheck]) -> str:
    pairs = "; ".join(f"“{c.found}” for “{c.claimed}”" for c in deciding)
    if label == "refutes":
        return f"The evidence says otherwise: {pairs}."
    return f"The evidence says the same: {pairs}."


def _unsettled(
    claim: ClaimResult,
    parts: ClaimParts,
    checks: list[PartCheck],
    update: Mapping[str, object],
    context: list[str],
) -> ClaimResult:
    if not parts.checked:
        why = "The claim names nothing the evidence could confirm or contradict."
    elif not context:
        about = parts.subject or "what the claim is about"
        why = f"No sentence of the evidence about {about} states what the claim says of it."
    else:
        why = "The evidence about it does not settle what the claim says."
    return claim.model_copy(
        update={
            **update,
            "label": "not enough information",
            "reason": why,
            "quotes": [],
            "parts": checks,
            "context": context,
        }
    )


def about_its_subject(
    result: ClaimResult, parts: ClaimParts, sources: Mapping[str, EvidenceItem]
) -> ClaimResult:
    """A claim read as a whole, keeping only the cited sentences about its subject
    (:func:`~.passage.about_subject`): a stance that rests on none of them is "not
    enough information". ``sources``: the check's evidence by id."""

    def about(quote: Quote) -> bool:
        item = sources.get(quote.evidence_id)
        if item is None:
            return False
        encyclopedic = item.source == "wikipedia"
        return about_subject(parts, item.title, quote.text, encyclopedic=encyclopedic)

    kept = [q for q in result.quotes if about(q)] if parts.subject else list(result.quotes)
    update: dict[str, object] = {"read_by": "stance", "subject": parts.subject, "quotes": kept}
    if result.label in ("supports", "refutes") and not kept:
        about_what = parts.subject or "what the claim is about"
        update["label"] = "not enough information"
        update["reason"] = f"The reading cited no sentence about {about_what}."
    return result.model_copy(update=update)
