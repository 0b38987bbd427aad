"""Planning another search for a claim the evidence left unsettled: one short call.

The verifier's route is asked for at most :data:`MAX_QUERIES` new queries (the claim's
own words, a question about its checkable part, a named article); a query that repeats
one already run (MiniLM cosine at least ``repeat_at``, FIRE's stop) is not run again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..llm.base import ChatMessage
from ..llm.session import CheckSession, StepFailed
from ..ports import TextEncoder
from ..prompting import render
from .context import PanelContext

__all__ = ["MAX_QUERIES", "PlanReply", "fresh_queries", "plan_queries"]

MAX_QUERIES = 2
MAX_QUERY_CHARS = 120
PLAN_TOKENS = 80


class PlanReply(BaseModel):
    """The queries the planner proposes."""

    model_config = ConfigDict(extra="forbid")

    queries: list[str] = Field(max_length=MAX_QUERIES)


async def plan_queries(
    session: CheckSession,
    panel: PanelContext,
    claim: str,
    tried: Sequence[str],
    step: str,
) -> list[str]:
    """New queries for ``claim`` (``tried``: the queries run so far); ``[]`` when the
    call failed."""
    task = render(
        "plan",
        claim=panel.untrusted(claim),
        tried=[panel.untrusted(q) for q in tried],
        max_queries=MAX_QUERIES,
    )
    messages = [ChatMessage("system", render("passage_system")), ChatMessage("user", task)]
    try:
        answer = await session.ask(
            "verifier",
            step,
            messages,
            PlanReply,
            max_tokens=PLAN_TOKENS,
            max_items={"queries": MAX_QUERIES},
        )
    except StepFailed:
        return []
    queries = [" ".join(q.split())[:MAX_QUERY_CHARS] for q in answer.value.queries]
    return [q for q in dict.fromkeys(queries) if q]


async def fresh_queries(
    queries: Sequence[str], tried: Sequence[str], encoder: TextEncoder, repeat_at: float
) -> tuple[list[str], list[str]]:
    """``queries`` split into the new ones and the repeats: a query whose cosine to a
    query run before (or to a new one kept before it) reaches ``repeat_at``."""
    if not queries:
        return [], []
    vectors = await asyncio.to_thread(encoder.encode, [*tried, *queries])
    kept: list[int] = list(range(len(tried)))
    fresh, repeats = [], []
    for i, query in enumerate(queries, len(tried)):
        if kept and float(np.max(vectors[kept] @ vectors[i])) >= repeat_at:
            repeats.append(query)
            continue
        kept.append(i)
        fresh.append(query)
    return fresh, repeats
