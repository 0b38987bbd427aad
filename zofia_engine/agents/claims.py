"""Claim extraction (paper §4.1.3, eq. 8): the claims the post itself makes.

The extractor needs only the post, so it runs while Stage 1 retrieves. The post
reaches every agent with its sentences numbered ([S1], [S2] …), and each claim the
extractor writes names the sentence it comes from. A claim that names no sentence of
the post, or whose words the named sentence does not carry, was written from the
model's own knowledge, not taken from the post: it is dropped and counted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from ..config import AgentSettings
from ..language import LANGUAGE_NAMES
from ..llm.session import CheckSession, StepFailed
from ..prompting import render
from ..report import ClaimResult
from .context import PanelContext

__all__ = ["Extracted", "ExtractorReply", "PostClaim", "extract_claims", "support"]

# Words that carry no claim of their own (a claim's content is what is left).
_FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "it's",
        "their",
        "there",
        "they",
        "he",
        "she",
        "his",
        "her",
        "him",
        "we",
        "our",
        "you",
        "your",
        "i",
        "me",
        "my",
        "not",
        "no",
        "than",
        "then",
        "so",
        "such",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "when",
        "where",
        "why",
        "how",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "after",
        "before",
        "during",
        "also",
        "said",
        "says",
        "say",
        "will",
        "would",
        "can",
        "could",
        "should",
        "may",
        "might",
        "must",
        "one",
        "two",
        "some",
        "any",
        "all",
        "each",
        "every",
        "more",
        "most",
        "very",
        "just",
        "only",
        "new",
    ]
)
_WORD = re.compile(r"[\w'-]+")
LEAD_WORDS = 60
STEM = 5  # words compared by their first five letters: "painted" ~ "painting"


class PostClaim(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sentence: int
    claim: str


class ExtractorReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    core_claim: PostClaim
    sub_claims: list[PostClaim]


@dataclass(frozen=True)
class Extracted:
    """The claims kept, and how many the extractor wrote that the post does not make."""

    claims: list[ClaimResult]
    dropped: int


def _stems(text: str) -> set[str]:
    words = (w.strip("'-").casefold() for w in _WORD.findall(text))
    return {w[:STEM] for w in words if w and w not in _FUNCTION_WORDS}


def support(claim: str, sentence: str) -> float:
    """The share of the claim's content words (by stem) that ``sentence`` carries."""
    wanted = _stems(claim)
    return len(wanted & _stems(sentence)) / len(wanted) if wanted else 0.0


async def extract_claims(
    session: CheckSession, panel: PanelContext, settings: AgentSettings
) -> Extracted | StepFailed:
    """The core claim and up to ``max_sub_claims`` sub-claims the post makes, or the
    step's failure. The first claim kept is the core claim."""
    task = render(
        "extractor",
        min_sub=settings.min_sub_claims,
        max_sub=settings.max_sub_claims,
        post_language=LANGUAGE_NAMES.get(panel.post_language, ""),
    )
    try:
        answer = await session.ask(
            "extractor",
            "claims:extract",
            panel.conversation(task=task),
            ExtractorReply,
            max_tokens=360,
            max_items={"sub_claims": settings.max_sub_claims},
        )
    except StepFailed as exc:
        return exc
    reply = answer.value
    return kept_claims(
        [reply.core_claim, *reply.sub_claims],
        panel.sentences,
        settings.claim_support,
        settings.max_sub_claims + 1,
    )


def kept_claims(
    written: Sequence[PostClaim], sentences: Sequence[str], threshold: float, limit: int
) -> Extracted:
    """The claims whose named sentence (numbered from 1) carries at least ``threshold``
    of their content words, without repeats, at most ``limit``; the first is the core."""
    claims: list[ClaimResult] = []
    seen: set[str] = set()
    dropped = 0
    for item in written:
        text = " ".join(item.claim.split())
        if not text or text.casefold() in seen:
            continue
        seen.add(text.casefold())
        n = item.sentence
        if not 1 <= n <= len(sentences) or support(text, sentences[n - 1]) < threshold:
            dropped += 1
            continue
        if len(claims) < limit:
            kind = "core" if not claims else "sub"
            claims.append(ClaimResult(id=f"claim-{len(claims)}", kind=kind, text=text, sentence=n))
    if not claims and sentences:  # the post's own first sentence is a claim it makes
        lead = " ".join(sentences[0].split()[:LEAD_WORDS])
        claims.append(ClaimResult(id="claim-0", kind="core", text=lead, sentence=1))
    return Extracted(claims, dropped)
