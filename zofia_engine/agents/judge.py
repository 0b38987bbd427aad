"""The judge (paper §4.2, Appendix A.8) and the confidence read from its tokens.

The judge answers with word labels in a JSON object (small models answer
one-letter questions badly): ``real``, ``fake`` or ``continue`` after a
round, ``real`` or ``fake`` when forced to rule at the cap.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..llm.base import ChatMessage, Completion, TokenLogprob
from ..llm.session import CheckSession, StepFailed
from ..prompting import render
from ..report import JudgeRuling
from .context import PanelContext

__all__ = ["decision_confidence", "final_ruling", "rule_on_round"]

MAX_WORDS = 80
MAX_TOKENS = 220
TOP_LOGPROBS = 5


class JudgeReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: Literal["real", "fake", "continue"]
    reason: str


class FinalReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: Literal["real", "fake"]
    reason: str


_VALUE = re.compile(r'"decision"\s*:\s*"')


def _token_at(logprobs: Sequence[TokenLogprob], pos: int) -> tuple[TokenLogprob, int] | None:
    offset = 0
    for token in logprobs:
        if offset + len(token.token) > pos:
            return token, pos - offset
        offset += len(token.token)
    return None


def decision_confidence(
    text: str, logprobs: Sequence[TokenLogprob] | None, decision: str
) -> float | None:
    """P(decision) / (P(real) + P(fake)) at the token where the decision word starts.

    Alternatives are matched by prefix, so ``fa`` counts for ``fake``. ``None``
    when there are no logprobs or the decision cannot be located.
    """
    if not logprobs:
        return None
    match = _VALUE.search(text)
    if match is None:
        return None
    found = _token_at(logprobs, match.end())
    if found is None:
        return None
    token, cut = found
    if not token.top:  # no alternatives: nothing to weigh the decision against
        return None
    lead = token.token[:cut]
    mass = {"real": 0.0, "fake": 0.0}
    alternatives = {**token.top, token.token: token.logprob}
    for alt, logprob in alternatives.items():
        if not alt.startswith(lead):
            continue
        fragment = alt[cut:].strip().lower()
        for option in mass:
            if fragment and (option.startswith(fragment) or fragment.startswith(option)):
                mass[option] += math.exp(logprob)
                break
    total = mass["real"] + mass["fake"]
    if total <= 0 or decision not in mass:
        return None
    return round(mass[decision] / total, 4)


async def rule_on_round(
    session: CheckSession,
    ctx: PanelContext,
    material: Sequence[ChatMessage],
    round_no: int,
    max_rounds: int,
) -> tuple[JudgeRuling, Completion | None]:
    """The judge's ruling after ``round_no``; a failed call counts as ``continue``."""
    task = render("judge", rounds=round_no, max_rounds=max_rounds, max_words=MAX_WORDS)
    try:
        answer = await session.ask(
            "judge",
            f"debate:judge:{round_no}",
            ctx.conversation(*material, task=task),
            JudgeReply,
            max_tokens=MAX_TOKENS,
            top_logprobs=TOP_LOGPROBS,
        )
    except StepFailed as exc:
        return JudgeRuling(round=round_no, decision=None, status="failed", error=exc.reason), None
    reply = answer.value
    ruling = JudgeRuling(round=round_no, decision=reply.decision, reason=reply.reason.strip())
    return ruling, answer.completion


async def final_ruling(
    session: CheckSession, ctx: PanelContext, material: Sequence[ChatMessage], rounds: int
) -> tuple[JudgeRuling, Completion | None]:
    """A forced real/fake ruling, when the debate hit its cap or was not held."""
    task = render("judge_final", rounds=rounds, max_words=MAX_WORDS)
    try:
        answer = await session.ask(
            "judge",
            "debate:judge:final",
            ctx.conversation(*material, task=task),
            FinalReply,
            max_tokens=MAX_TOKENS,
            top_logprobs=TOP_LOGPROBS,
        )
    except StepFailed as exc:
        ruling = JudgeRuling(
            round=rounds, decision=None, forced=True, status="failed", error=exc.reason
        )
        return ruling, None
    reply = answer.value
    decision: Literal["real", "fake"] = reply.decision
    return (
        JudgeRuling(round=rounds, decision=decision, reason=reply.reason.strip(), forced=True),
        answer.completion,
    )
