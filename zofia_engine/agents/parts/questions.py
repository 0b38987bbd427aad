"""The two narrow questions the reader asks the verifier model about a claim.

1. **Fill the blanks** (:func:`fill_blanks`): the claim with its checkable parts
   numbered out, and a passage; for each blank, the passage's words that fill it, or
   "not stated". The grammar restricts each answer to the passage's words of the right
   kind, so the answer is a span of the passage by construction, and the token
   probabilities say how sure the model was that the passage states it at all.
2. **Is this what the passage says?** (:func:`passage_says`): the claim with the
   model's answers written in, yes or no, with the probability of "yes". Filling a
   blank with the only place a sentence names is easy even when the sentence says
   where someone *lived*, not where they were *born*; this second question catches it.

Code, not the model's prose, then decides what the evidence says
(:mod:`~zofia_engine.agents.parts.reader`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

from ...llm.base import ChatMessage, TokenLogprob
from ...llm.session import CheckSession, StepFailed
from ...llm.token_odds import option_probabilities
from ...prompting import render
from ..context import PanelContext
from .claim import ClaimParts, PartKind
from .passage import Passage

__all__ = ["NOT_STATED", "Filled", "fill_blanks", "passage_says", "yes_probability"]

NOT_STATED = "not stated"
_WHAT: dict[PartKind, str] = {
    "place": "a place",
    "person": "a person",
    "organisation": "an organisation",
    "nationality": "a nationality or people",
    "date": "a date or year",
    "number": "a number or amount",
    "name": "a name",
    "category": "what kind of thing it is",
    "ordinal": "a rank (first, second, largest …)",
}
FILL_TOKENS = 24  # per blank
SAID_TOKENS = 12


@dataclass(frozen=True)
class Filled:
    """What the passage fills each blank with (``NOT_STATED`` when it does not say), and
    the model's probability that it states something for it (``None`` without token
    probabilities)."""

    answers: tuple[str, ...]
    stated: tuple[float | None, ...]


def _reply_model(count: int) -> type[BaseModel]:
    fields: dict[str, Any] = {f"blank_{n}": (str, ...) for n in range(1, count + 1)}
    return create_model("BlanksReply", __config__=ConfigDict(extra="forbid"), **fields)


async def fill_blanks(
    session: CheckSession, panel: PanelContext, claim: ClaimParts, passage: Passage, step: str
) -> Filled:
    """Ask what ``passage`` fills each of ``claim``'s blanks with.

    Raises:
        StepFailed: the call failed or its reply could not be read.
    """
    checked = claim.checked
    blanks = [_WHAT[p.kind] for p in checked]
    enums = {f"blank_{n}": [*options, NOT_STATED] for n, options in enumerate(passage.options, 1)}
    task = render(
        "cloze",
        passage=panel.untrusted(passage.text),
        statement=panel.untrusted(claim.blanked()),
        blanks=blanks,
        subject=panel.untrusted(claim.subject or "the same thing"),
    )
    messages = [ChatMessage("system", render("passage_system")), ChatMessage("user", task)]
    answer = await session.ask(
        "verifier",
        step,
        messages,
        _reply_model(len(checked)),
        max_tokens=FILL_TOKENS * len(checked) + 8,
        enums=enums,
        top_logprobs=5,
    )
    reply, completion = answer.value.model_dump(), answer.completion
    answers = tuple(str(reply[f"blank_{n}"]) for n in range(1, len(checked) + 1))
    stated = tuple(
        stated_probability(completion.text, completion.logprobs, f"blank_{n}", enums[key])
        for n, key in enumerate(enums, 1)
    )
    return Filled(answers, stated)


def stated_probability(
    text: str, logprobs: Sequence[TokenLogprob] | None, key: str, options: Sequence[str]
) -> float | None:
    """The model's probability that the value of ``key`` is one of the passage's words
    rather than "not stated", at the token where the value starts: the mass of the
    alternatives that begin an option, split between "not stated" and the rest."""
    if not logprobs:
        return None
    match = re.search(rf'"{re.escape(key)}"\s*:\s*"', text)
    if match is None:
        return None
    offset = 0
    for token in logprobs:
        if offset + len(token.token) > match.end():
            return _split(token, match.end() - offset, options)
        offset += len(token.token)
    return None


def _split(token: TokenLogprob, cut: int, options: Sequence[str]) -> float | None:
    lead = token.token[:cut]
    said = unsaid = 0.0
    for alt, logprob in {**token.top, token.token: token.logprob}.items():
        fragment = alt[cut:] if alt.startswith(lead) else ""
        if not fragment:
            continue
        if NOT_STATED.startswith(fragment):
            unsaid += math.exp(logprob)
        elif any(o.startswith(fragment) for o in options if o != NOT_STATED):
            said += math.exp(logprob)
    total = said + unsaid
    return None if total <= 0 else round(said / total, 4)


class SaidReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    said: Literal["yes", "no"]


async def passage_says(
    session: CheckSession, panel: PanelContext, statement: str, passage: Passage, step: str
) -> float | None:
    """The model's probability that ``passage`` says ``statement`` (see
    :func:`yes_probability`)."""
    task = render(
        "restated", passage=panel.untrusted(passage.text), statement=panel.untrusted(statement)
    )
    return await yes_probability(session, step, task, SaidReply, SAID_TOKENS)


async def yes_probability(
    session: CheckSession, step: str, task: str, reply: type[BaseModel], max_tokens: int
) -> float | None:
    """The verifier's probability of "yes" to ``task`` over a passage, read from the
    token probabilities of ``reply``'s one yes/no field (1.0 or 0.0 from its word alone
    without them; ``None`` when the call failed)."""
    (field,) = reply.model_fields
    messages = [ChatMessage("system", render("passage_system")), ChatMessage("user", task)]
    try:
        answer = await session.ask(
            "verifier", step, messages, reply, max_tokens=max_tokens, top_logprobs=5
        )
    except StepFailed:
        return None
    c = answer.completion
    odds = option_probabilities(c.text, c.logprobs, field, ("yes", "no"))
    if odds is None:
        return 1.0 if getattr(answer.value, field) == "yes" else 0.0
    return odds["yes"]
