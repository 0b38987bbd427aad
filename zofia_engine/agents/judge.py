"""The judge (ZoFia §4.2, RADAR §3.3) and what its tokens say about how sure it is.

After each round the judge gives the outcome it would rule now and whether it has
heard enough (``stop``) or the debate should go on (``continue``); at the round cap
it must rule. Both answers are words in a JSON object (small models answer
one-letter questions badly). The token probabilities at those words give RADAR's
controller its two signals, the stop margin s = p(STOP) − p(CONTINUE) and the
label confidence c = max p(outcome), and give the verdict its confidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from ..llm.base import ChatMessage, Completion
from ..llm.session import Answer, CheckSession, StepFailed
from ..llm.token_odds import option_probabilities
from ..prompting import render
from ..report import OUTCOMES, JudgeRuling, Outcome
from .context import PanelContext

__all__ = [
    "UNSAID",
    "EvidenceSettled",
    "FinalReply",
    "JudgeReply",
    "Judged",
    "calibrated",
    "final_ruling",
    "round_ruling",
]

MAX_WORDS = 60
MAX_TOKENS = 200
TOP_LOGPROBS = 5


class JudgeReply(BaseModel):
    """After a round: the outcome now, whether to stop, and why."""

    model_config = ConfigDict(extra="forbid")

    verdict: Outcome
    next: Literal["stop", "continue"]
    reason: str


class FinalReply(BaseModel):
    """At the end: the outcome and why, for readers."""

    model_config = ConfigDict(extra="forbid")

    verdict: Outcome
    reason: str


#: what the judge is asked for: a round's ruling or the final one
R = TypeVar("R", JudgeReply, FinalReply)


@dataclass(frozen=True)
class EvidenceSettled:
    """What the judge is told of the evidence before it rules: whether anything found can
    carry a verdict (``any``; when nothing can, it is told so plainly), each claim the
    evidence settled, in words, with the sentence that settled it (``findings``), and the
    outcomes it may rule (``allowed``: the grammar holds it to them; a settled core claim
    allows only its own outcome or "misleading")."""

    any: bool = True
    findings: tuple[str, ...] = ()
    allowed: tuple[Outcome, ...] = OUTCOMES


#: The default: nothing is said of the evidence (the judge is not told it settled nothing).
UNSAID = EvidenceSettled()


@dataclass(frozen=True)
class Judged:
    """A ruling and the probabilities read from its tokens (``None`` without them)."""

    ruling: JudgeRuling
    outcomes: dict[str, float] | None = None
    completion: Completion | None = None


def calibrated(outcomes: dict[str, float], prior: dict[str, float]) -> dict[str, float]:
    """Contextual calibration: each probability divided by the judge's prior for that
    outcome (its answer on a content-free post), renormalised."""
    scaled = {k: v / max(prior.get(k, 0.0), 1e-6) for k, v in outcomes.items()}
    total = sum(scaled.values()) or 1.0
    return {k: round(v / total, 4) for k, v in scaled.items()}


async def round_ruling(
    session: CheckSession,
    panel: PanelContext,
    material: Sequence[ChatMessage],
    round_no: int,
    max_rounds: int,
    *,
    settled: EvidenceSettled = UNSAID,
) -> Judged:
    """The judge after ``round_no``: the outcome now and stop or continue. A failed call
    reads as ``continue``. ``settled``: what the evidence settled, as the judge is told."""
    task = _task("judge", settled, rounds=round_no, max_rounds=max_rounds)
    conversation = panel.conversation(*material, task=task)
    try:
        answer = await _ask(session, conversation, f"debate:judge:{round_no}", JudgeReply, settled)
    except StepFailed as exc:
        failed = JudgeRuling(round=round_no, decision=None, status="failed", error=exc.reason)
        return Judged(failed)
    reply, completion = answer.value, answer.completion
    outcomes = option_probabilities(completion.text, completion.logprobs, "verdict", OUTCOMES)
    stop = option_probabilities(completion.text, completion.logprobs, "next", ("stop", "continue"))
    ruling = JudgeRuling(
        round=round_no,
        decision=reply.verdict if reply.next == "stop" else "continue",
        outcome=reply.verdict,
        reason=reply.reason.strip(),
        stop_margin=None if stop is None else round(stop["stop"] - stop["continue"], 4),
        label_confidence=None if outcomes is None else max(outcomes.values()),
        probabilities=outcomes,
    )
    return Judged(ruling, outcomes, completion)


async def final_ruling(
    session: CheckSession,
    panel: PanelContext,
    material: Sequence[ChatMessage],
    rounds: int,
    *,
    settled: EvidenceSettled = UNSAID,
) -> Judged:
    """The ruling the judge must give: at the round cap, or when there was no debate.
    ``settled`` as for :func:`round_ruling`."""
    conversation = panel.conversation(*material, task=_task("judge_final", settled, rounds=rounds))
    try:
        answer = await _ask(session, conversation, "debate:judge:final", FinalReply, settled)
    except StepFailed as exc:
        failed = JudgeRuling(
            round=rounds, decision=None, forced=True, status="failed", error=exc.reason
        )
        return Judged(failed)
    reply, completion = answer.value, answer.completion
    outcomes = option_probabilities(completion.text, completion.logprobs, "verdict", OUTCOMES)
    ruling = JudgeRuling(
        round=rounds,
        decision=reply.verdict,
        outcome=reply.verdict,
        reason=reply.reason.strip(),
        forced=True,
        label_confidence=None if outcomes is None else max(outcomes.values()),
        probabilities=outcomes,
    )
    return Judged(ruling, outcomes, completion)


def _task(prompt: Literal["judge", "judge_final"], settled: EvidenceSettled, **values: int) -> str:
    """The judge's task: ``prompt`` (``judge``: stop or go on; ``judge_final``: rule now)
    with what the evidence settled and ``values`` (the rounds so far, the cap)."""
    told = {"settled": settled.any, "findings": settled.findings, "allowed": settled.allowed}
    return render(prompt, max_words=MAX_WORDS, **told, **values)


async def _ask(
    session: CheckSession,
    conversation: list[ChatMessage],
    step: str,
    reply: type[R],
    settled: EvidenceSettled,
) -> Answer[R]:
    """The judge asked ``conversation`` as ``step``, its verdict held to what the evidence
    allows."""
    enums = {"verdict": list(settled.allowed)}
    return await session.ask(
        "judge",
        step,
        conversation,
        reply,
        max_tokens=MAX_TOKENS,
        top_logprobs=TOP_LOGPROBS,
        enums=enums,
    )
