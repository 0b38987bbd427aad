"""The narrow question the answer reading asks the verifier model: do the facts a
fact-checker's answer reports show that the claim is correct? Yes or no, with the
model's probability of "yes" from its token probabilities.

The model is asked over the whole answer, the sentences that repeat the claim included:
measured on the dev claims of LIAR-PLUS (``bench/liar_settle.py``), a passage without
them separated true claims from false ones less well (the repeated claim says what the
findings are about). Code decides what the probability means (:mod:`.reader`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ...llm.session import CheckSession
from ...prompting import render
from ..context import PanelContext
from ..parts.questions import yes_probability
from .passage import Answer

__all__ = ["FindingsReply", "findings_show"]

FINDINGS_TOKENS = 12


class FindingsReply(BaseModel):
    """Whether the answer's findings show the claim is correct."""

    model_config = ConfigDict(extra="forbid")

    correct: Literal["yes", "no"]


async def findings_show(
    session: CheckSession, panel: PanelContext, claim: str, answer: Answer, step: str
) -> float | None:
    """The model's probability that ``answer``'s findings show ``claim`` is correct (see
    :func:`..parts.questions.yes_probability`)."""
    task = render(
        "answer_findings", passage=panel.untrusted(answer.text), claim=panel.untrusted(claim)
    )
    return await yes_probability(session, step, task, FindingsReply, FINDINGS_TOKENS)
