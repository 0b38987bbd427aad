"""Reading a claim against a fact-checker's answer to it: two readings must agree.

A claim the evidence holds a fact-checker's answer to (:mod:`.passage`) is read three
ways, each on its own failure:

1. the **stance reading** (:mod:`..reading`): the verifier reads the claim as a whole
   over the numbered evidence sentences and cites those that show its stance; it leans
   only when it cites a sentence of the answer that does more than repeat the claim;
2. the **findings question** (:mod:`.questions`): yes or no, do the facts the answer
   reports show that the claim is correct, with the model's probability of "yes": it
   leans to "supports" from ``so_at``, to "refutes" up to ``not_so_at``;
3. for a claim that states a **figure**, the figures compared by code
   (:mod:`.figures`) over the answer's sentences that do more than repeat the claim:
   the same figure leans to "supports", only others in its unit to "refutes".

The claim settles only when the findings question leans and another reading leans the
same way, and none leans the other way. Anything else leaves it unsettled, with the
readings and their lean kept (``ClaimResult.answer``). What the claim asserts (a
statement attributed to someone, a figure, an event: :mod:`.asserts`) is recorded too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal

from ...llm.session import CheckSession
from ...records.reading import AnswerReading, PartOutcome
from ...report import ClaimResult, Quote
from ..context import PanelContext
from .asserts import asserted, claim_kind
from .figures import compare_figures, figures_in
from .passage import Answer, AnswerRules, repeats_claim
from .questions import findings_show

__all__ = ["AnswerRules", "agreed", "read_answered"]

ReadingLean = Literal["supports", "refutes"]
MAX_QUOTES = 2


def agreed(
    said: ReadingLean | None, others: Sequence[ReadingLean | None]
) -> tuple[ReadingLean | None, bool]:
    """The lean of the readings and whether the claim settles: the findings question's
    lean (``said``), agreed by at least one of ``others`` and opposed by none. Without
    the question's lean, the others' when they all lean one way (never settling)."""
    leaning = [lean for lean in others if lean is not None]
    if said is None:
        return (leaning[0] if leaning and len(set(leaning)) == 1 else None), False
    return said, said in leaning and all(lean == said for lean in leaning)


def _lean(word: str | None) -> ReadingLean | None:
    """A reading's label or a comparison's outcome as a lean ("agrees" supports)."""
    if word in ("supports", "agrees"):
        return "supports"
    return "refutes" if word in ("refutes", "differs") else None


def _said_lean(p: float | None, rules: AnswerRules) -> ReadingLean | None:
    if p is None:
        return None
    if p >= rules.so_at:
        return "supports"
    return "refutes" if p <= rules.not_so_at else None


def _own_quotes(claim: ClaimResult, answer: Answer, text: str) -> list[Quote]:
    """The stance reading's quotes from the answer that do more than repeat the claim."""
    return [
        q
        for q in claim.quotes
        if q.evidence_id == answer.evidence_id and not repeats_claim(q.text, text)
    ]


def _figures(text: str, answer: Answer) -> tuple[PartOutcome, list[str]]:
    """The claim's figures against those of the answer's findings, and the findings that
    give a figure in one of the claim's units."""
    claimed = figures_in(text)
    units = {f.unit for f in claimed}
    parsed = [(s, figures_in(s)) for s in answer.findings]
    kept = [(s, found) for s, found in parsed if any(f.unit in units for f in found)]
    given = [f for _, found in kept for f in found]
    return compare_figures(claimed, given), [s for s, _ in kept]


async def read_answered(
    session: CheckSession,
    panel: PanelContext,
    claims: Sequence[ClaimResult],
    answers: Sequence[Answer],
    rules: AnswerRules,
) -> list[ClaimResult]:
    """Each claim, as the stance reader read it, read again against its ``answer`` and
    settled only where two readings agree (see the module's docstring)."""
    reads = (_read_one(session, panel, c, a, rules) for c, a in zip(claims, answers, strict=True))
    return list(await asyncio.gather(*reads))


async def _read_one(
    session: CheckSession,
    panel: PanelContext,
    claim: ClaimResult,
    answer: Answer,
    rules: AnswerRules,
) -> ClaimResult:
    """``claim`` read against ``answer``: the findings question, its own quotes' stance
    and, for a figure, the figures compared by code; settled where they agree."""
    text = asserted(claim.text)
    kind = claim_kind(claim.text)
    p = await findings_show(session, panel, text, answer, f"claims:answer:{claim.id}")
    own = _own_quotes(claim, answer, text)
    stance = _lean(claim.label) if own else None
    figures, giving = _figures(text, answer) if kind == "figure" else ("unstated", [])
    by_figures = _lean(figures)
    said = _said_lean(p, rules)
    lean, settles = agreed(said, [stance, by_figures])
    reading = AnswerReading(
        kind=kind,
        evidence_id=answer.evidence_id,
        similarity=answer.similarity,
        stance=stance,
        said=p,
        said_lean=said,
        figures=figures if kind == "figure" else None,
        lean=lean,
        agrees=settles,
    )
    update: dict[str, object] = {
        "read_by": "answer",
        "answer": reading,
        "restated": p,
        "context": [answer.evidence_id],
    }
    if not settles or lean is None:
        why = "The fact-checker's answer to this claim was not read the same way twice."
        update.update({"label": "not enough information", "reason": why, "quotes": []})
        return claim.model_copy(update=update)
    quotes = own if stance == lean else []
    if not quotes and by_figures == lean:
        quotes = [Quote(text=s, evidence_id=answer.evidence_id) for s in giving]
    if not quotes:
        findings = answer.findings or answer.sentences
        quotes = [Quote(text=findings[0], evidence_id=answer.evidence_id)]
    says = "says so" if lean == "supports" else "says otherwise"
    reason = f"A fact-checker's answer to this claim {says}."
    update.update({"label": lean, "reason": reason, "quotes": quotes[:MAX_QUOTES]})
    return claim.model_copy(update=update)
