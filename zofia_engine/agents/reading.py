"""Reading the evidence as numbered sentences (paper eq. 9, with citations exact by
construction).

Every source counts (web pages, Wikipedia articles, the local corpus and the text of
published fact-checks); the post's own images never do. Each document is split into
sentences and encoded once. Each claim is read against its most similar sentences
(cosine at least θ_sim, at most ``top_k_sentences``). The sentences chosen for a group
of claims go into one numbered list that every reading of the group shares, so a
backend with a prefix cache evaluates it once. The reader answers with a stance and
sentence numbers: the quote *is* the sentence, so a paraphrase cannot break it.

Two rules guard the new failure, a number that points at the wrong sentence:

* a number outside the list does not count;
* a cited sentence whose similarity to the claim is below ``min_citation_similarity``
  does not count (it is not about the claim).

Both are counted in ``ClaimResult.dropped_quotes``. A claim left with no sentence that
counts is "not enough information": absence of evidence is not falsity (AgentFact).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..config import AgentSettings
from ..llm.base import ChatMessage
from ..llm.nli_backend import NLIStanceModel, decide
from ..llm.session import CheckSession, StepFailed
from ..llm.token_odds import option_probabilities
from ..ports import TextEncoder
from ..prompting import render
from ..report import ClaimResult, Quote
from .context import PanelContext
from .evidence_sentences import SentenceList

__all__ = [
    "ReaderQuestion",
    "ReaderReply",
    "ReadingRules",
    "ask_reader",
    "cited",
    "read_claims",
    "read_claims_by_model",
    "reading_of",
    "unread",
]

MAX_CITED = 3
# The closest sentences checked one by one for a contradiction: the core claim's two,
# each sub-claim's one (each check is a call).
PAIRS = {"core": 2, "sub": 1}
PAIR_TOKENS = 32
MAX_WORDS = 40
READ_TOKENS = 160

Stance = Literal["supports", "refutes", "neither"]
R = TypeVar("R", bound=BaseModel)
_LABELS: dict[str, Literal["supports", "refutes", "not enough information"]] = {
    "supports": "supports",
    "refutes": "refutes",
    "neither": "not enough information",
}


class ReaderReply(BaseModel):
    """A claim's reading: the numbered sentences that bear on it, what they say against
    the claim, and so which way they go (in that order: the stance comes last)."""

    model_config = ConfigDict(extra="forbid")

    sentences: list[int] = Field(max_length=MAX_CITED)
    reason: str
    stance: Stance


@dataclass(frozen=True)
class ModelReading:
    """A stance model's reading of one claim, in the form an LLM reading takes."""

    sentences: list[int]
    reason: str
    stance: Stance


def cited(
    numbers: Sequence[int], similarity: np.ndarray, shown: SentenceList, threshold: float
) -> tuple[list[Quote], int]:
    """The sentences a reading cites that count (in range, about the claim: ``similarity``
    is the claim's row), as quotes, and how many numbers were dropped."""
    quotes: list[Quote] = []
    dropped = 0
    for number in dict.fromkeys(numbers):
        if not 1 <= number <= len(shown.sentences) or similarity[number - 1] < threshold:
            dropped += 1
            continue
        sentence = shown.sentences[number - 1]
        quotes.append(Quote(text=sentence.text, evidence_id=sentence.evidence_id))
    return quotes, dropped


def unread(claim: ClaimResult, **scores: float) -> ClaimResult:
    """A claim no evidence sentence is similar enough to: not enough information, with no
    call (``scores``: what the tree records for it)."""
    return claim.model_copy(
        update={
            "label": "not enough information",
            "reason": "No sentence of the evidence was close enough to this claim to read.",
            "status": "skipped",
            **scores,
        }
    )


def reading_of(
    claim: ClaimResult,
    reply: Any,
    row: np.ndarray,
    shown: SentenceList,
    threshold: float,
) -> ClaimResult:
    """``claim`` as ``reply`` (any reply with a stance, sentence numbers and a reason)
    reads it, under the two citation rules; a stance with no sentence that counts
    becomes "not enough information"."""
    quotes, dropped = cited(reply.sentences, row, shown, threshold)
    label = _LABELS[reply.stance]
    reason = reply.reason.strip()
    if label != "not enough information" and not quotes:
        label = "not enough information"
        reason = "The reading cited no sentence of the evidence that is about this claim."
    return claim.model_copy(
        update={
            "label": label,
            "reason": reason,
            "quotes": quotes if label != "not enough information" else [],
            "dropped_quotes": dropped,
            "context": list(dict.fromkeys(s.evidence_id for s in shown.sentences)),
        }
    )


@dataclass(frozen=True)
class ReaderQuestion(Generic[R]):
    """What the verifier is asked of one claim: the step it is logged under
    (``claims:<step>:<claim id>``), the prompt's template, and the reply's schema and
    length."""

    step: str
    template: str
    schema: type[R]
    max_tokens: int


#: the flat reading's question (the tree asks its own, ``NODE``)
READ = ReaderQuestion("read", "reader", ReaderReply, READ_TOKENS)


async def ask_reader(
    session: CheckSession,
    panel: PanelContext,
    claim: ClaimResult,
    own: list[int],
    question: ReaderQuestion[R],
) -> tuple[ClaimResult, R | None]:
    """One claim read by the verifier role over the check's numbered sentences
    (``panel.readable``; its own closest ``own`` named in the task); the reply too,
    ``None`` when the step failed."""
    shown = panel.readable
    said = panel.untrusted(claim.text)  # taken from the post: data, like the post
    task = render(question.template, claim=said, own=own, max_words=MAX_WORDS, max_cited=MAX_CITED)
    numbers = list(range(1, len(shown.sentences) + 1))
    try:
        answer = await session.ask(
            "verifier",
            f"claims:{question.step}:{claim.id}",
            panel.conversation(panel.evidence_message(), task=task),
            question.schema,
            max_tokens=question.max_tokens,
            enums={"sentences": numbers} if numbers else None,
        )
    except StepFailed as exc:
        context = list(dict.fromkeys(s.evidence_id for s in shown.sentences))
        failed = {"status": "failed", "error": exc.reason, "context": context}
        return claim.model_copy(update=failed), None
    return claim, answer.value


class PairReply(BaseModel):
    """One sentence against one claim: the same subject, and whether both can be true."""

    model_config = ConfigDict(extra="forbid")

    same_subject: Literal["yes", "no"]
    both_true: Literal["yes", "no"]


async def contradiction(
    session: CheckSession, panel: PanelContext, claim: ClaimResult, number: int
) -> float | None:
    """The model's probability that the shown sentence ``number`` and ``claim`` cannot
    both be true (``None`` without token probabilities, or when the call failed)."""
    sentence = panel.readable.sentences[number - 1].text
    messages = [
        ChatMessage("system", render("contradiction_system")),
        ChatMessage(
            "user",
            render(
                "contradiction",
                sentence=panel.untrusted(sentence),
                claim=panel.untrusted(claim.text),
            ),
        ),
    ]
    try:
        answer = await session.ask(
            "verifier",
            f"claims:contradiction:{claim.id}:{number}",
            messages,
            PairReply,
            max_tokens=PAIR_TOKENS,
            top_logprobs=5,
        )
    except StepFailed:
        return None
    c = answer.completion
    odds = option_probabilities(c.text, c.logprobs, "both_true", ("yes", "no"))
    return None if odds is None else odds["no"]


def most_contradicting(
    numbers: Sequence[int], odds: Sequence[float | None], least: float
) -> tuple[float, int] | None:
    """The probability and number of the sentence most likely to contradict the claim,
    when that probability reaches ``least``; else ``None``."""
    scored = [(p, n) for p, n in zip(odds, numbers, strict=True) if p is not None and p >= least]
    return max(scored) if scored else None


@dataclass(frozen=True)
class ReadingRules:
    """Which sentences a claim is read against, and which citations count: its ``top_k``
    closest with cosine at least ``theta`` (eq. 9), and a cited sentence from cosine
    ``threshold`` (``min_citation_similarity``)."""

    top_k: int
    theta: float
    threshold: float

    @classmethod
    def of(cls, agents: AgentSettings) -> ReadingRules:
        return cls(agents.top_k_sentences, agents.theta_sim, agents.min_citation_similarity)

    async def closest(
        self, panel: PanelContext, claims: Sequence[ClaimResult], encoder: TextEncoder
    ) -> tuple[np.ndarray, list[list[int]]]:
        """Each claim's cosine to every shown sentence, and its own closest numbers."""
        texts = [c.text for c in claims]
        return await asyncio.to_thread(
            panel.readable.closest, texts, encoder, top_k=self.top_k, theta=self.theta
        )


async def read_claims(
    session: CheckSession,
    panel: PanelContext,
    claims: Sequence[ClaimResult],
    encoder: TextEncoder,
    rules: ReadingRules,
    *,
    contradiction_at: float | None = None,
) -> list[ClaimResult]:
    """Read every claim at once over the check's numbered sentences (``panel.readable``),
    each pointed to its own closest ones. With ``contradiction_at``, each claim's closest
    sentences that count (:data:`PAIRS`) are also checked one by one for a contradiction,
    and a probability from ``contradiction_at`` refutes the claim, whatever the reading
    says (a small model reads a sentence on the same subject as support)."""
    shown, threshold = panel.readable, rules.threshold
    similarity, own = await rules.closest(panel, claims, encoder)

    async def one(i: int, claim: ClaimResult) -> ClaimResult:
        if not own[i]:
            return unread(claim)
        pairs = [n for n in own[i] if similarity[i][n - 1] >= threshold][: PAIRS[claim.kind]]
        odds_of = (
            asyncio.gather(*(contradiction(session, panel, claim, n) for n in pairs))
            if contradiction_at is not None
            else _none(len(pairs))
        )
        (asked, reply), odds = await asyncio.gather(
            ask_reader(session, panel, claim, own[i], READ),
            odds_of,
        )
        found = most_contradicting(pairs, odds, contradiction_at or 2.0)
        if found is not None:
            p, n = found
            why = f"Sentence {n} and the claim cannot both be true (p = {p:.2f})."
            verdict = ModelReading(sentences=[n], reason=why, stance="refutes")
            return reading_of(claim, verdict, similarity[i], shown, threshold)
        if reply is None:
            return asked
        return reading_of(claim, reply, similarity[i], shown, threshold)

    return list(await asyncio.gather(*(one(i, c) for i, c in enumerate(claims))))


async def _none(count: int) -> list[float | None]:
    return [None] * count


async def read_claims_by_model(
    model: NLIStanceModel,
    panel: PanelContext,
    claims: Sequence[ClaimResult],
    encoder: TextEncoder,
    rules: ReadingRules,
    *,
    min_probability: float,
) -> list[ClaimResult]:
    """Every claim read by a stance model (``[stance] backend = "nli"``): each of its own
    closest sentences scored as (sentence, claim), all pairs in one batched call; the
    sentences that carry the winning stance are cited, under the same citation rules."""
    shown, threshold = panel.readable, rules.threshold
    similarity, own = await rules.closest(panel, claims, encoder)
    pairs = [
        (shown.sentences[n - 1].text, c.text)
        for c, mine in zip(claims, own, strict=True)
        for n in mine
    ]
    scores = iter(await model.score(pairs))
    read = []
    for i, (claim, mine) in enumerate(zip(claims, own, strict=True)):
        mine_scores = [next(scores) for _ in mine]
        if not mine:
            read.append(unread(claim))
            continue
        stance, carrying = decide(mine_scores, min_probability)
        best = max(getattr(s, stance) for s in mine_scores) if carrying else 0.0
        reply = ModelReading(
            sentences=[mine[j] for j in carrying],
            reason=f"The stance model reads it: {stance} with probability {best:.2f}.",
            stance=stance,
        )
        read.append(reading_of(claim, reply, similarity[i], shown, threshold))
    return read
