"""Which way each document goes, and how far its source can be trusted (ToE's evidence
objects; AgentFact's source-reliability rule).

Once the core claim is known, every web document gets one short call, all at once:
does it support the claim, refute it, or neither, and which sentence shows it. A
sentence that is not in the document word for word is dropped, as the claim
verifier's quotes are. Each document's source is rated from the news-domain quality
data shipped with the engine (:mod:`~zofia_engine.retrieval.credibility`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..llm.session import Answer, CheckSession, answer_or_failed
from ..prompting import render
from ..report import ClaimResult, EvidenceItem, Stance
from ..retrieval.credibility import SourceQuality
from .context import PanelContext, clip
from .quotes import find_quote

__all__ = ["StanceReply", "rate_sources", "stances_read", "weigh_stances"]

MAX_TOKENS = 120
MAX_DOCUMENT_CHARS = 1200


class StanceReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stance: Literal["supports", "refutes", "neutral"]
    sentence: str


async def _stance(
    session: CheckSession, panel: PanelContext, claim: str, item: EvidenceItem
) -> Stance:
    task = render(
        "stance",
        id=item.id,
        title=panel.untrusted(item.title),
        text=panel.untrusted(clip(item.text, MAX_DOCUMENT_CHARS)),
        claim=claim,
    )
    answer = await answer_or_failed(
        Stance(label="neutral"),
        session.ask(
            "verifier",
            f"evidence:stance:{item.id}",
            panel.conversation(task=task),
            StanceReply,
            max_tokens=MAX_TOKENS,
        ),
    )
    if not isinstance(answer, Answer):
        return answer
    reply = answer.value
    sentence = reply.sentence.strip()
    found = sentence and find_quote(sentence, [(item.id, item.text)]) is not None
    return Stance(label=reply.stance, sentence=sentence if found else "")


async def weigh_stances(
    session: CheckSession,
    panel: PanelContext,
    claim: str,
    items: Sequence[EvidenceItem],
    limit: int,
) -> list[EvidenceItem]:
    """``items`` with the stance of each of the first ``limit`` web documents toward
    ``claim``, asked all at once; the others as they were."""
    chosen = [i for i, item in enumerate(items) if item.source == "web"][:limit]
    stances = await asyncio.gather(*(_stance(session, panel, claim, items[i]) for i in chosen))
    weighed = list(items)
    for i, stance in zip(chosen, stances, strict=True):
        weighed[i] = items[i].model_copy(update={"stance": stance})
    return weighed


def stances_read(items: Sequence[EvidenceItem], core: ClaimResult | None) -> list[EvidenceItem]:
    """``items`` with the stance the core claim's reading found: each document whose
    sentence the reading cited goes the reading's way, shown by that sentence (no call;
    the adaptive depth's stand-in for one stance call per document)."""
    if core is None or core.label not in ("supports", "refutes"):
        return list(items)
    label: Literal["supports", "refutes"] = "supports" if core.label == "supports" else "refutes"
    shown = {q.evidence_id: q.text for q in reversed(core.quotes)}  # the first cited wins
    return [
        item.model_copy(update={"stance": Stance(label=label, sentence=shown[item.id])})
        if item.id in shown and item.source == "web"
        else item
        for item in items
    ]


def rate_sources(items: Sequence[EvidenceItem], quality: SourceQuality) -> list[EvidenceItem]:
    """``items`` with their sources rated: a page by its address, a published
    fact-check by its publisher's site (a fact-checker by definition)."""
    rated = []
    for item in items:
        if item.source in ("wikipedia", "image"):
            rated.append(item)
            continue
        found = quality.classify(item.url)
        if item.source == "factcheck" and found.label != "satire":
            found = found.model_copy(update={"label": "fact-checker"})
        rated.append(item.model_copy(update={"credibility": found}))
    return rated
