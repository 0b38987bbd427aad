"""The only-LLM baseline of the paper's tables: one call, the post alone.

The same model the engine would use for its verdicts (the ``judge`` role's
route) is shown the same system and post messages as the panel, and asked for
``real`` or ``fake`` as a word in a JSON object (the paper's question), read as
the outcomes ``true`` and ``false``. No retrieval, no agents, no debate. The
answer comes back as a :class:`~zofia_engine.report.Report`, so the evaluation
reads it, its usage and its confidence like an engine check.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..agents.context import PanelContext
from ..config import EngineSettings
from ..llm.router import LLMRouter
from ..llm.session import StepFailed
from ..llm.token_odds import option_probabilities
from ..post import Post
from ..prompting import render
from ..records.notes import note
from ..report import Confidence, Debate, Report, Usage
from ..text import checkable_text

__all__ = ["ROLE", "OnlyLLMBaseline", "OnlyLLMReply"]

ROLE = "judge"
MAX_WORDS = 40
MAX_TOKENS = 120
TOP_LOGPROBS = 5


class OnlyLLMReply(BaseModel):
    """The baseline's answer; the request names its schema ``onlyllmreply``."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["real", "fake"]
    reason: str


class OnlyLLMBaseline:
    """Asks the judge's model for a verdict on the post alone.

    Args:
        settings: the checked settings; only ``[llm]`` and ``[agents]`` are used.
        llm: a router to use instead of the one the settings build.

    Use ``async with OnlyLLMBaseline(settings) as baseline:``, then
    ``await baseline.load()`` and ``await baseline.check(post)``.
    """

    def __init__(
        self, settings: EngineSettings | None = None, *, llm: LLMRouter | None = None
    ) -> None:
        self.settings = settings or EngineSettings()
        self.llm = llm or LLMRouter(self.settings.llm)

    async def load(self) -> None:
        await self.llm.load()

    async def aclose(self) -> None:
        await self.llm.aclose()

    async def __aenter__(self) -> OnlyLLMBaseline:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def check(self, post: Post | str) -> Report:
        """One call; a failed call gives an ``undetermined`` report saying why.

        Raises:
            InvalidPostError: the post has no text.
        """
        if isinstance(post, str):
            post = Post(text=post)
        started = time.perf_counter()
        text, cleaned = checkable_text(post.text)
        found = [note(change, "cleaned") for change in cleaned]
        panel = PanelContext.of_post(text, post, self.settings.agents)
        session = self.llm.session()
        confidence = Confidence(basis="unavailable: no ruling was made")
        try:
            answer = await session.ask(
                ROLE,
                "only-llm",
                panel.conversation(task=render("only_llm", max_words=MAX_WORDS)),
                OnlyLLMReply,
                max_tokens=MAX_TOKENS,
                top_logprobs=TOP_LOGPROBS,
            )
        except StepFailed as exc:
            verdict = "undetermined"
            summary = f"No verdict: {exc.reason}"
            found.append(note(f"no verdict: the only-LLM call failed ({exc.reason})", "no_verdict"))
        else:
            word = answer.value.decision
            verdict = "true" if word == "real" else "false"  # the paper's words, read as outcomes
            summary = answer.value.reason.strip()
            c = answer.completion
            odds = option_probabilities(c.text, c.logprobs, "decision", ("real", "fake"))
            confidence = (
                Confidence(value=odds[word], basis="token probabilities of real vs fake")
                if odds is not None
                else Confidence(basis="unavailable: no usable token probabilities")
            )
        return Report(
            verdict=verdict,
            confidence=confidence,
            summary=summary,
            debate=Debate(held=False),
            usage=Usage.of(session.calls),
            timings={"total_ms": round((time.perf_counter() - started) * 1000, 2)},
            notes=found,
        )
