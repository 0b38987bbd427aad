"""One check's evidence step: what the evidence can carry, decided before any debate.

The published fact-checks of the core claim join Stage 1's documents first (their
text is evidence too); then the panel is shown one numbered list of the sentences
closest to the post and its claims (:meth:`EvidenceReading.show`); then every claim is
read against it (flat, or as ToE's tree at the full depth), by the verifier LLM or by
a stance model; and each web document gets its stance on the core claim: from the
core claim's reading (adaptive) or one call per document (full).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from .agents.answers import Answer, AnswerRules, answer_for, read_answered
from .agents.answers.asserts import asserted
from .agents.claims import Extracted
from .agents.context import PanelContext
from .agents.evidence_sentences import SentenceIndex, SentenceList
from .agents.parts import NO_KNOWLEDGE, NameKnowledge, PartsRules, read_by_parts
from .agents.parts.parse import parse_claims, whole_claims
from .agents.parts.reader import about_its_subject
from .agents.quotes import Haystack
from .agents.reading import ReadingRules, read_claims, read_claims_by_model
from .agents.stance import stances_read
from .agents.tree import TreeReading
from .agents.weighing import Weighing, reversed_marked
from .config import EngineSettings
from .images.analysis import ImageEvidence
from .llm.nli_backend import NLIStanceModel
from .llm.session import CheckSession, StepFailed
from .ports import TextEncoder
from .records.stage1 import Stage1Result
from .report import Analyses, ClaimResult, SearchRound, TreeSummary
from .retrieval.factcheck.lookup import Matched
from .retrieval.ner.parser import TextParser
from .retrieval.ner.sentences import split_sentences

__all__ = ["EvidenceReading", "Gathered", "ReadClaims"]

T = TypeVar("T")
LEAD_CHARS = 300  # the post's first sentence, as a query


@dataclass
class ReadClaims:
    """The read claims (flat, or the tree's nodes), the tree's summary, a problem, and
    how many claims the extractor wrote that the post does not make."""

    claims: list[ClaimResult]
    tree: TreeSummary | None
    problem: str
    dropped: int = 0


@dataclass
class Gathered:
    """What the panel has before the debate: Stage 1's result and every analysis."""

    stage1: Stage1Result
    analyses: Analyses
    claims: list[ClaimResult]
    tree: TreeSummary | None = None
    images: ImageEvidence | None = None
    # The post and the evidence, folded once: where a quoted phrase must occur.
    sources: Haystack = field(default_factory=lambda: Haystack([]))
    # The claims the evidence settled (``grounded_claims``), worked out once per check.
    grounded: list[str] = field(default_factory=list)
    # The rounds of searching again for a core claim the first search left unsettled.
    searches: list[SearchRound] = field(default_factory=list)


class EvidenceReading:
    """The evidence step of one check.

    Args:
        settings: the engine's settings (``[agents]``, ``[tree]``, ``[stance]``).
        session: the check's LLM session.
        panel: the check's shared material; its evidence is replaced as it is weighed.
        encoder: Stage 1's sentence encoder.
        web: whether the web source is on for this check (the stance calls need it).
        stance_model: reads claims instead of the verifier LLM (``[stance] backend``).
        parser: parses claims and sentences for the part-by-part reading
            (``[agents] reading = "parts"``); ``None`` reads every claim as a whole.
        knowledge: what is known of names (which place lies in which).

    ``shown`` is set once the panel's evidence is fixed (or the step failed first).
    """

    def __init__(
        self,
        settings: EngineSettings,
        session: CheckSession,
        panel: PanelContext,
        encoder: TextEncoder,
        *,
        web: bool = True,
        stance_model: NLIStanceModel | None = None,
        parser: TextParser | None = None,
        knowledge: NameKnowledge = NO_KNOWLEDGE,
    ) -> None:
        self.settings = settings
        self.session = session
        self.panel = panel
        self.encoder = encoder
        self.web = web
        self.stance_model = stance_model
        self.parser = parser
        self.knowledge = knowledge
        self.full = settings.agents.depth == "full"
        self.answer_rules = AnswerRules(answered_at=settings.agents.answered_at)
        self.shown = asyncio.Event()
        self.index = SentenceIndex([], np.zeros((0, 1), dtype=np.float32))

    async def run(
        self,
        weighing: Weighing,
        extraction: asyncio.Task[Extracted | StepFailed] | None,
        published: asyncio.Task[list[Matched]],
        images: asyncio.Task[ImageEvidence] | None,
    ) -> ReadClaims:
        """Weigh the evidence and read the claims against it (the module's steps)."""
        panel = self.panel
        extracted = await extraction if extraction is not None else None
        if isinstance(extracted, StepFailed):
            problem, claims, dropped = f"claim extraction failed: {extracted.reason}", [], 0
        else:
            problem, claims = "", extracted.claims if extracted else []
            dropped = extracted.dropped if extracted else 0
        core = claims[0].text if claims else None
        try:
            found = await weighing.factchecks(core, published)
            seen = await images if images is not None else None
            documents = panel.evidence
            panel.evidence = [*(seen.items if seen else []), *found, *documents]
            panel.show(await asyncio.to_thread(self.shortlist, claims))
        finally:
            self.shown.set()  # the expert reads the evidence as shown (or as it is)
        stances = weighing.stances(core, documents) if self.full and self.web else _same(documents)
        weighed, (checked, tree) = await asyncio.gather(stances, self.read(claims))
        if not self.full:
            weighed = stances_read(weighed, checked[0] if checked else None)
        panel.evidence = reversed_marked([*(seen.items if seen else []), *found, *weighed])
        return ReadClaims(checked, tree, problem, dropped)

    def shortlist(self, claims: list[ClaimResult]) -> SentenceList:
        """The evidence sentences the panel is shown: the post's and each claim's closest
        (blocking)."""
        agents = self.settings.agents
        index = SentenceIndex.build(self.panel.evidence, split_sentences, self.encoder)
        self.index = index  # every sentence that can settle a claim: the part reader's pool
        lead = (self.panel.sentences or [self.panel.text])[0][:LEAD_CHARS]
        queries = [lead, *(c.text for c in claims)]
        return index.shortlist(
            queries, self.encoder, top_k=agents.top_k_sentences, theta=agents.theta_sim
        )

    async def read(self, claims: list[ClaimResult]) -> tuple[list[ClaimResult], TreeSummary | None]:
        """The claims read over the shown sentences: by the stance model, as ToE's tree
        (full depth, tree on), or flat."""
        if not claims:
            return [], None
        a, encoder, rules = (
            self.settings.agents,
            self.encoder,
            ReadingRules.of(self.settings.agents),
        )
        if self.stance_model is not None:
            least = self.settings.stance.min_probability
            model = self.stance_model
            return await read_claims_by_model(
                model, self.panel, claims, encoder, rules, min_probability=least
            ), None
        if self.full and self.settings.tree.enabled:
            tree = TreeReading(self.session, self.panel, encoder, a, self.settings.tree)
            return await tree.grow(claims)
        # A claim a fact-checker's answer in the evidence answers is read against it.
        held = await asyncio.to_thread(self.answers, claims)
        rest = [c for c, answer in zip(claims, held, strict=True) if answer is None]
        answered = [(c, answer) for c, answer in zip(claims, held, strict=True) if answer]
        read_rest, read_held = await asyncio.gather(
            self.read_flat(rest, rules), self.read_answers(answered, rules)
        )
        by_answer, others = iter(read_held), iter(read_rest)
        return [next(others) if answer is None else next(by_answer) for answer in held], None

    async def read_flat(self, claims: list[ClaimResult], rules: ReadingRules) -> list[ClaimResult]:
        """The claims read part by part (``[agents] reading``) or as a whole."""
        # The parser is English (spaCy's small English model): a post in another language
        # is read as a whole.
        english = self.panel.post_language in ("", "en")
        if self.settings.agents.reading == "parts" and self.parser is not None and english:
            return await self.read_parts(claims, rules)
        return await self.read_whole(claims, rules)

    def answers(self, claims: list[ClaimResult]) -> list[Answer | None]:
        """Each claim's fact-checker's answer among the evidence (:mod:`.agents.answers`),
        or ``None`` (blocking)."""
        rules, index = self.answer_rules, self.index
        if rules.answered_at > 1 or not claims or not index.sentences:
            return [None] * len(claims)
        documents = {e.id: e for e in self.panel.evidence}
        texts = [asserted(c.text) for c in claims]
        vectors = self.encoder.encode(texts)
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return [
            answer_for(text, v, index, documents, rules)
            for text, v in zip(texts, vectors, strict=True)
        ]

    async def read_answers(
        self, claims: list[tuple[ClaimResult, Answer]], rules: ReadingRules
    ) -> list[ClaimResult]:
        """Claims with a fact-checker's answer in hand: read as a whole, then against the
        answer; they settle where two readings agree."""
        if not claims:
            return []
        read = await self.read_whole([c for c, _ in claims], rules)
        answers = [answer for _, answer in claims]
        return await read_answered(self.session, self.panel, read, answers, self.answer_rules)

    async def read_whole(self, claims: list[ClaimResult], rules: ReadingRules) -> list[ClaimResult]:
        """Each claim read as a whole: a stance and the sentences that show it, with the
        contradiction question (``[agents] contradiction_at``)."""
        if not claims:
            return []
        at = self.settings.agents.contradiction_at
        return await read_claims(
            self.session,
            self.panel,
            claims,
            self.encoder,
            rules,
            contradiction_at=at if at <= 1 else None,
        )

    async def read_parts(self, claims: list[ClaimResult], rules: ReadingRules) -> list[ClaimResult]:
        """Claims with checkable parts read part by part (:mod:`.agents.parts`); the
        others as a whole, citing only sentences about their subject."""
        assert self.parser is not None
        a, panel = self.settings.agents, self.panel
        claims = await whole_claims(self.parser, claims, panel.sentences)
        split = await parse_claims(self.parser, claims, panel.sentences)
        by_parts = [i for i, p in enumerate(split) if p.checked]
        whole = [i for i, p in enumerate(split) if not p.checked]
        parts_rules = PartsRules(
            said_at=a.said_at,
            same_kind_at=a.same_kind_at,
            second_reading=a.second_reading,
            unsettled_part=a.unsettled_part,
        )
        read_parts, read_whole = await asyncio.gather(
            read_by_parts(
                self.session,
                panel,
                [(claims[i], split[i]) for i in by_parts],
                self.index.sentences,
                self.index.vectors,
                parser=self.parser,
                knowledge=self.knowledge,
                encoder=self.encoder,
                rules=parts_rules,
            ),
            self.read_whole([claims[i] for i in whole], rules),
        )
        sources = {e.id: e for e in panel.evidence}
        read: dict[int, ClaimResult] = dict(zip(by_parts, read_parts, strict=True))
        for i, result in zip(whole, read_whole, strict=True):
            read[i] = about_its_subject(result, split[i], sources)
        return [read[i] for i in range(len(claims))]


async def _same(value: T) -> T:
    return value
