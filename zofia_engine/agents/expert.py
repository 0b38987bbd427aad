"""The domain expert (paper §4.1.2): pick the field, then analyse as its expert.

The first call needs only the post, so it runs while Stage 1 retrieves; the
second reads the evidence the panel is shown (Wikipedia's entries among it) as
reference.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..llm.session import Answer, CheckSession, StepFailed, answer_or_failed
from ..prompting import render
from ..report import ExpertFinding
from .context import PanelContext

__all__ = ["DomainReply", "analyse_as_expert", "detect_domain"]

MAX_WORDS = 70


class DomainReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str
    expert_role: str


class ExpertReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    knowledge_concordance: str
    logical_integrity: str
    lean: Literal["real", "fake"]


async def detect_domain(session: CheckSession, panel: PanelContext) -> DomainReply | StepFailed:
    """The post's field and the expert to ask; a failure is returned, not raised."""
    try:
        answer = await session.ask(
            "expert",
            "expert:domain",
            panel.conversation(task=render("domain")),
            DomainReply,
            max_tokens=64,
        )
    except StepFailed as exc:
        return exc
    return answer.value


async def analyse_as_expert(
    session: CheckSession, panel: PanelContext, domain: DomainReply | StepFailed
) -> ExpertFinding:
    """Knowledge concordance and logical integrity, with Wikipedia as reference.

    If the domain could not be detected, a general fact-checker takes the role
    and the report says so.
    """
    note = ""
    if isinstance(domain, StepFailed):
        note = f"domain detection failed ({domain.reason}); a general fact-checker stood in"
        domain = DomainReply(domain="general", expert_role="fact-checker")
    role = " ".join(domain.expert_role.split())[:60] or "fact-checker"
    task = render("expert", expert_role=role, max_words=MAX_WORDS)
    answer = await answer_or_failed(
        ExpertFinding(domain=domain.domain, expert_role=role),
        session.ask(
            "expert",
            "expert:analysis",
            panel.conversation(panel.evidence_message(), task=task),
            ExpertReply,
            max_tokens=320,
        ),
    )
    if not isinstance(answer, Answer):
        return answer
    reply = answer.value
    return ExpertFinding(
        domain=domain.domain.strip(),
        expert_role=role,
        knowledge_concordance=reply.knowledge_concordance.strip(),
        logical_integrity=reply.logical_integrity.strip(),
        lean=reply.lean,
        error=note,
    )
