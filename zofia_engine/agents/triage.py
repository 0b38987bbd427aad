"""Triage: what kind of post this is, decided by one short call on the post alone.

A tipline receives many forwards that make no checkable claim (greetings, opinions,
jokes) and some that are scams. Only a checkable claim gets the full check; the
others get a short answer in seconds. A failed call reads as a claim: the full
check then runs, as it would without triage.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..llm.session import Answer, CheckSession, answer_or_failed
from ..llm.token_odds import option_probabilities
from ..prompting import render
from ..report import Triage
from ..stage2_settings import TriageSettings
from .context import PanelContext

__all__ = ["KINDS", "TriageReply", "triage"]

MAX_TOKENS = 120
MAX_SIGNS = 3
TOP_LOGPROBS = 5


class TriageReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["claim", "no_claim", "satire", "scam"]
    reason: str
    signs: list[str]


KINDS = ("claim", "no_claim", "satire", "scam")


async def triage(session: CheckSession, panel: PanelContext, min_confidence: float) -> Triage:
    """The post's kind, why, and for a scam the signs that give it away.

    A kind other than ``claim`` stands only when the model's token probability of it
    is at least ``min_confidence`` (when there are probabilities), and a scam only
    with at least one sign; otherwise the post is checked in full as a claim, and the
    report keeps what the model said (``overruled``).
    """
    answer = await answer_or_failed(
        Triage(kind="claim"),
        session.ask(
            "triage",
            "triage",
            panel.conversation(task=render("triage")),
            TriageReply,
            max_tokens=MAX_TOKENS,
            max_items={"signs": MAX_SIGNS},
            top_logprobs=TOP_LOGPROBS,
        ),
    )
    if not isinstance(answer, Answer):
        return answer
    reply, completion = answer.value, answer.completion
    odds = option_probabilities(completion.text, completion.logprobs, "kind", KINDS)
    probability = odds[reply.kind] if odds is not None else None
    signs = [s.strip() for s in reply.signs if s.strip()][:MAX_SIGNS]
    unsure = probability is not None and probability < min_confidence
    unfounded = reply.kind == "scam" and not signs
    if reply.kind != "claim" and (unsure or unfounded):
        return Triage(
            kind="claim",
            reason=reply.reason.strip(),
            probability=probability,
            overruled=reply.kind,
        )
    return Triage(
        kind=reply.kind,
        reason=reply.reason.strip(),
        signs=signs if reply.kind == "scam" else [],
        probability=probability,
    )


def gathers_beside_triage(settings: TriageSettings, *, local: bool) -> bool:
    """Whether the gathering starts beside the triage call (``[triage] overlap``):
    ``auto`` only when everything it may ask runs on this machine (``local``: every
    model route and only local sources), so that a gathering dropped for a greeting
    costs no quota and no money."""
    if not settings.enabled or settings.overlap == "never":
        return False
    return settings.overlap == "always" or local
