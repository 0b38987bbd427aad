"""Growing ToE's tree of claims over the retrieved evidence (ToE Algorithm 1, with its
rule-based aggregation; see :mod:`~zofia_engine.agents.claim_tree`).

The extractor's core claim is the root and its sub-claims the root's children (the
root's one split that always happens). Each round judges a group of siblings at once,
over one numbered list of evidence sentences (each node pointed to its own most
similar ones, at most ``max_documents``; see :mod:`~zofia_engine.agents.reading`), then
updates the tree bottom-up. The search stops when the root is decisive or has converged, when the
budget of judgements is spent, or when no node is left to split: a node is split
when its own reliability is low, it had evidence to judge, and the depth allows.
A node with no close sentence at all is judged without a call, as the flat reading does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..config import AgentSettings, TreeSettings
from ..llm.session import CheckSession, StepFailed
from ..ports import TextEncoder
from ..prompting import render
from ..report import ClaimResult, TreeSummary
from .claim_tree import ClaimTree, decision_of
from .context import PanelContext
from .reading import MAX_CITED, ReaderQuestion, ask_reader, reading_of, unread

__all__ = ["DecomposeReply", "NodeReply", "TreeReading"]

NODE_TOKENS = 320
SPLIT_TOKENS = 300
MIN_SPLIT, MAX_SPLIT = 2, 4

Dimension = Literal["place", "entity", "event", "cause", "source", "quantity", "context"]


class NodeReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sentences: list[int] = Field(max_length=MAX_CITED)
    reason: str
    stance: Literal["supports", "refutes", "neither"]
    veracity: float = Field(ge=0, le=1)
    reliability: float = Field(ge=0, le=1)


#: the question a node of the tree is judged by
NODE = ReaderQuestion("node", "node", NodeReply, NODE_TOKENS)


class SubClaim(BaseModel):
    model_config = ConfigDict(extra="forbid")

    claim: str
    dimension: Dimension
    importance: float = Field(ge=0, le=1)


class DecomposeReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sub_claims: list[SubClaim]


async def _split(
    session: CheckSession, panel: PanelContext, claim: ClaimResult, first_id: int
) -> list[ClaimResult]:
    """2 to 4 sub-claims of ``claim``, one dimension each (none when the call fails or
    gives fewer than two usable ones)."""
    task = render("decompose", claim=claim.text, min_sub=MIN_SPLIT, max_sub=MAX_SPLIT)
    try:
        answer = await session.ask(
            "extractor",
            f"claims:split:{claim.id}",
            panel.conversation(task=task),
            DecomposeReply,
            max_tokens=SPLIT_TOKENS,
            max_items={"sub_claims": MAX_SPLIT},
        )
    except StepFailed:
        return []
    seen = {claim.text.casefold()}
    subs: list[ClaimResult] = []
    for sub in answer.value.sub_claims[:MAX_SPLIT]:
        text = sub.claim.strip()
        if not text or text.casefold() in seen:
            continue
        seen.add(text.casefold())
        subs.append(
            ClaimResult(
                id=f"claim-{first_id + len(subs)}",
                kind="sub",
                text=text,
                dimension=sub.dimension,
                importance=sub.importance,
            )
        )
    return subs if len(subs) >= MIN_SPLIT else []


@dataclass(frozen=True)
class TreeReading:
    """ToE's tree of one check's claims, read over the check's numbered sentences
    (``panel.readable``): what growing it and judging its nodes need, the same for every
    node.

    Args:
        session: the check's LLM session.
        panel: the check's shared material.
        encoder: the sentence encoder (a node's closest sentences).
        agents: ``[agents]`` (the cosine a sentence and a citation need).
        settings: ``[tree]``.
    """

    session: CheckSession
    panel: PanelContext
    encoder: TextEncoder
    agents: AgentSettings
    settings: TreeSettings

    async def grow(self, extracted: Sequence[ClaimResult]) -> tuple[list[ClaimResult], TreeSummary]:
        """The tree over ``extracted`` (the core claim first), read over the check's numbered
        sentences (``panel.readable``): every node's claim, depth first, and the root's
        summary."""
        settings = self.settings
        tree = ClaimTree(extracted[0], settings)
        pending = [tree.root_id, *tree.add_children(tree.root_id, extracted[1:])]
        if len(extracted) == 1:  # no sub-claims: the root's first split is asked for below
            tree.root.expanded = False
        evaluations, stopped_by = 0, ""
        next_id = len(extracted)
        while True:
            batch = tree.pruned(pending)[: settings.max_evaluations - evaluations]
            pending = []
            if batch:
                await self.batch(tree, batch)
                evaluations += len(batch)
                tree.aggregate()
            if tree.decisive(tree.root_id):
                stopped_by = "decisive"
                break
            if tree.converged():
                stopped_by = "converged"
                break
            if evaluations >= settings.max_evaluations:
                stopped_by = "budget"
                break
            node = tree.next_to_split()
            if node is None:
                stopped_by = "exhausted"
                break
            subs = await _split(self.session, self.panel, node.claim, next_id)
            next_id += len(subs)
            pending = tree.add_children(node.id, subs)
        root = tree.root
        summary = TreeSummary(
            veracity=root.v,
            reliability=root.r,
            decision=decision_of(root.v, settings),
            evaluations=evaluations,
            stopped_by=stopped_by,
        )
        return tree.claims(), summary

    async def batch(self, tree: ClaimTree, batch: list[str]) -> None:
        """Judge the nodes of ``batch`` (siblings) at once, over one shared list of
        sentences, each pointed to its own closest ones."""
        claims = [tree.nodes[node_id].claim for node_id in batch]
        similarity, own = await asyncio.to_thread(
            self.panel.readable.closest,
            [c.text for c in claims],
            self.encoder,
            top_k=self.settings.max_documents,
            theta=self.agents.theta_sim,
        )
        judged = await asyncio.gather(
            *(self.one(c, own[i], similarity[i]) for i, c in enumerate(claims))
        )
        for claim, mine in zip(judged, own, strict=True):
            tree.judged(claim, has_evidence=bool(mine))

    async def one(self, claim: ClaimResult, own: list[int], row: np.ndarray) -> ClaimResult:
        """A node's claim judged over its own closest sentences ``own`` (``row``: its
        cosine to every shown sentence)."""
        if not own:
            return unread(claim, veracity=0.5, reliability=0.0)
        asked, reply = await ask_reader(self.session, self.panel, claim, own, NODE)
        if reply is None:
            return asked
        threshold = self.agents.min_citation_similarity
        judged = reading_of(claim, reply, row, self.panel.readable, threshold)
        scores = {"veracity": round(reply.veracity, 4), "reliability": round(reply.reliability, 4)}
        if reply.stance != "neither" and judged.label == "not enough information":
            scores = {"veracity": 0.5, "reliability": 0.0}  # its sentences did not count
        return judged.model_copy(update=scores)
