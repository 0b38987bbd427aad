"""Claim extraction and RAG verification (paper §4.1.3, eq. 8-9).

The extractor needs only the post, so it runs while Stage 1 retrieves. Each
claim is then verified on its own against the web passages whose SBERT cosine
to the claim reaches θ_sim among the top-k. Every quote the verifier returns
is checked against those passages; quotes that are not there are dropped and
counted.
"""

from __future__ import annotations

import asyncio
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..config import AgentSettings
from ..llm.session import CheckSession, StepFailed
from ..ports import TextEncoder
from ..prompting import render
from ..report import ClaimResult, EvidenceItem, Quote
from .context import PanelContext

__all__ = [
    "Passage",
    "PassageIndex",
    "checked_quotes",
    "extract_claims",
    "find_quote",
    "split_passages",
    "unchecked",
    "verify_claims",
]

MAX_WORDS = 50


class ExtractorReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    core_claim: str
    sub_claims: list[str]


R = TypeVar("R", bound=BaseModel)


class VerifierReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: Literal["supports", "refutes", "not enough information"]
    reason: str
    quotes: list[str] = Field(max_length=3)


@dataclass(frozen=True)
class Passage:
    """A chunk of one web document (``evidence_id``), the unit of eq. 9."""

    evidence_id: str
    text: str


async def extract_claims(
    session: CheckSession, ctx: PanelContext, settings: AgentSettings
) -> list[ClaimResult] | StepFailed:
    """The core claim and up to ``max_sub_claims`` sub-claims, or the step's failure."""
    task = render("extractor", min_sub=settings.min_sub_claims, max_sub=settings.max_sub_claims)
    try:
        answer = await session.ask(
            "extractor",
            "claims:extract",
            ctx.conversation(task=task),
            ExtractorReply,
            max_tokens=320,
            max_items={"sub_claims": settings.max_sub_claims},
        )
    except StepFailed as exc:
        return exc
    reply = answer.value
    claims = [ClaimResult(id="claim-0", kind="core", text=reply.core_claim.strip())]
    seen = {claims[0].text.casefold()}
    for text in reply.sub_claims:
        text = text.strip()
        if text and text.casefold() not in seen and len(claims) <= settings.max_sub_claims:
            seen.add(text.casefold())
            claims.append(ClaimResult(id=f"claim-{len(claims)}", kind="sub", text=text))
    return claims


def split_passages(
    items: Sequence[EvidenceItem], splitter: Callable[[str], list[str]], per_chunk: int
) -> list[Passage]:
    """Cut each web document into chunks of ``per_chunk`` sentences."""
    passages = []
    for item in items:
        if item.source != "web":
            continue
        sentences = splitter(item.text)
        for i in range(0, len(sentences), per_chunk):
            chunk = " ".join(sentences[i : i + per_chunk]).strip()
            if chunk:
                passages.append(Passage(item.id, chunk))
    return passages


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms: np.ndarray = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return np.asarray(vectors / norms)


@dataclass(frozen=True)
class PassageIndex:
    """The web passages of one check and their unit vectors, encoded once."""

    passages: list[Passage]
    vectors: np.ndarray

    @classmethod
    def build(cls, passages: Sequence[Passage], encoder: TextEncoder) -> PassageIndex:
        if not passages:
            return cls([], np.zeros((0, 1), dtype=np.float32))
        return cls(list(passages), _unit(encoder.encode([p.text for p in passages])))

    def select(
        self, claims: Sequence[str], encoder: TextEncoder, *, top_k: int, theta: float
    ) -> list[list[Passage]]:
        """Eq. 9: for each claim, its top-k passages whose cosine is at least ``theta``."""
        if not self.passages or not claims:
            return [[] for _ in claims]
        sims = _unit(encoder.encode(list(claims))) @ self.vectors.T
        chosen = []
        for row in sims:
            order = np.argsort(-row, kind="stable")[:top_k]
            chosen.append([self.passages[j] for j in order if row[j] >= theta])
        return chosen


_QUOTE_CHARS = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-"})


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTE_CHARS).casefold()
    return " ".join(text.split())


def find_quote(quote: str, passages: Sequence[Passage]) -> str | None:
    """The id of the passage that contains ``quote`` verbatim (up to case, spacing and
    typographic quotes; "…" may join excerpts of one passage), or ``None``."""
    parts = [_normal(p).strip(" \"'.,;:") for p in re.split(r"\.\.\.|…", quote)]
    parts = [p for p in parts if p]
    if not parts:
        return None
    for passage in passages:
        hay = _normal(passage.text)
        if all(p in hay for p in parts):
            return passage.evidence_id
    return None


def checked_quotes(texts: Sequence[str], passages: Sequence[Passage]) -> tuple[list[Quote], int]:
    """The quotes found word for word in ``passages`` (with the id of the page each
    is from), and how many were not there and were dropped."""
    quotes, dropped = [], 0
    for text in texts:
        source = find_quote(text, passages)
        if source is None:
            dropped += 1
        else:
            quotes.append(Quote(text=text.strip(), evidence_id=source))
    return quotes, dropped


def unchecked(claim: ClaimResult, **scores: float) -> ClaimResult:
    """A claim no web passage is similar enough to: not enough information, with no call
    (``scores``: what the tree records for it)."""
    return claim.model_copy(
        update={
            "label": "not enough information",
            "reason": "No web passage was similar enough to this claim to check it against.",
            "status": "skipped",
            **scores,
        }
    )


async def ask_verifier(
    session: CheckSession,
    ctx: PanelContext,
    claim: ClaimResult,
    passages: list[Passage],
    *,
    step: str,
    task: str,
    schema: type[R],
    max_tokens: int,
) -> tuple[ClaimResult, R | None]:
    """``claim`` judged by the verifier role over ``passages`` (the flat verification
    and the tree's nodes alike): its label, reason and the quotes found word for word in
    the passages, and the reply itself (``None`` when the step failed)."""
    context = list(dict.fromkeys(p.evidence_id for p in passages))  # in passage order
    try:
        answer = await session.ask(
            "verifier", step, ctx.conversation(task=task), schema, max_tokens=max_tokens
        )
    except StepFailed as exc:
        failed = {"status": "failed", "error": exc.reason, "context": context}
        return claim.model_copy(update=failed), None
    reply = answer.value
    said: Any = reply  # every verifier reply has a label, a reason and quotes
    quotes, dropped = checked_quotes(said.quotes, passages)
    judged = claim.model_copy(
        update={
            "label": said.label,
            "reason": said.reason.strip(),
            "quotes": quotes,
            "dropped_quotes": dropped,
            "context": context,
        }
    )
    return judged, reply


async def _verify_one(
    session: CheckSession, ctx: PanelContext, claim: ClaimResult, passages: list[Passage]
) -> ClaimResult:
    if not passages:
        return unchecked(claim)
    task = render("verifier", chunks=passages, claim=claim.text, max_words=MAX_WORDS)
    judged, _ = await ask_verifier(
        session,
        ctx,
        claim,
        passages,
        step=f"claims:verify:{claim.id}",
        task=task,
        schema=VerifierReply,
        max_tokens=320,
    )
    return judged


async def verify_claims(
    session: CheckSession,
    ctx: PanelContext,
    claims: list[ClaimResult],
    index: PassageIndex,
    encoder: TextEncoder,
    settings: AgentSettings,
) -> list[ClaimResult]:
    """Verify every claim in parallel, each against its own passages from ``index``."""
    contexts = await asyncio.to_thread(
        index.select,
        [c.text for c in claims],
        encoder,
        top_k=settings.top_k_chunks,
        theta=settings.theta_sim,
    )
    return list(
        await asyncio.gather(
            *(_verify_one(session, ctx, c, p) for c, p in zip(claims, contexts, strict=True))
        )
    )
