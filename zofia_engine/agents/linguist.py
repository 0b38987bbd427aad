"""The linguist (paper §4.1.1): five dimensions, each in a conversation of its own.

It sees only the post and relies on the model's own knowledge; each
dimension ends in a real/fake lean.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..llm.session import Answer, CheckSession, answer_or_failed
from ..prompting import render
from ..report import LinguistFinding
from .context import PanelContext

__all__ = ["DIMENSIONS", "Dimension", "analyse_language"]

MAX_WORDS = 40
MAX_TOKENS = 160


@dataclass(frozen=True)
class Dimension:
    key: str
    name: str
    cue: str


DIMENSIONS: dict[str, Dimension] = {
    d.key: d
    for d in (
        Dimension(
            "sentence",
            "sentence style",
            "sentence length, how simple or complex the wording is, and how formal the tone "
            "is (slang or expletives point to an informal tone)",
        ),
        Dimension(
            "word",
            "word choice",
            "superlatives, emotional or vague words, how often reporting verbs appear, and "
            "how first- and second-person pronouns are used",
        ),
        Dimension(
            "grammar",
            "grammar",
            "reported speech, passive voice and negation, and whether sources are paraphrased",
        ),
        Dimension(
            "emotion",
            "emotional tone",
            "the share of emotional words in the text and the headline, and how sensational "
            "or inflammatory the tone is",
        ),
        Dimension(
            "information_quality",
            "information quality",
            "clickbait patterns, too much or too little information, and context that does "
            "not match the story",
        ),
    )
}


class LinguistReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    analysis: str
    lean: Literal["real", "fake"]


async def _one(session: CheckSession, panel: PanelContext, dim: Dimension) -> LinguistFinding:
    task = render("linguist", dimension=dim, max_words=MAX_WORDS)
    answer = await answer_or_failed(
        LinguistFinding(dimension=dim.key),
        session.ask(
            "linguist",
            f"linguist:{dim.key}",
            panel.conversation(task=task),
            LinguistReply,
            max_tokens=MAX_TOKENS,
        ),
    )
    if not isinstance(answer, Answer):
        return answer
    reply = answer.value
    return LinguistFinding(dimension=dim.key, analysis=reply.analysis.strip(), lean=reply.lean)


async def analyse_language(
    session: CheckSession, panel: PanelContext, dimensions: Sequence[str]
) -> list[LinguistFinding]:
    """Judge each dimension in parallel, in isolated conversations."""
    return list(await asyncio.gather(*(_one(session, panel, DIMENSIONS[d]) for d in dimensions)))
