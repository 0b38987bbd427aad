"""Triage: what kind of post this is, decided by one short call on the post alone.

A tipline receives many forwards that make no checkable claim (greetings, opinions,
jokes) and some that are scams. Only a checkable claim gets the full check; the
others get a short answer in seconds. A failed call reads as a claim: the full
check then runs, as it would without triage.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..llm.session import CheckSession, StepFailed
from ..prompting import render
from ..report import Triage
from .context import PanelContext

__all__ = ["TriageReply", "triage"]

MAX_TOKENS = 120
MAX_SIGNS = 3


class TriageReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["claim", "no_claim", "satire", "scam"]
    reason: str
    signs: list[str]


async def triage(session: CheckSession, ctx: PanelContext) -> Triage:
    """The post's kind, why, and for a scam the signs that give it away."""
    try:
        answer = await session.ask(
            "triage",
            "triage",
            ctx.conversation(task=render("triage")),
            TriageReply,
            max_tokens=MAX_TOKENS,
            max_items={"signs": MAX_SIGNS},
        )
    except StepFailed as exc:
        return Triage(kind="claim", status="failed", error=exc.reason)
    reply = answer.value
    signs = [s.strip() for s in reply.signs if s.strip()][:MAX_SIGNS]
    return Triage(
        kind=reply.kind,
        reason=reply.reason.strip(),
        signs=signs if reply.kind == "scam" else [],
    )
