"""One check's run: the panel's work in the order the method gives it.

The triage call and the gathering start together (:meth:`CheckRun.run`): Stage 1
retrieves while the claims are extracted, and the claims are read against the evidence
as soon as it is in (:meth:`CheckRun.gather`). At the full depth the linguist's five
conversations and the domain expert work beside that; at the adaptive depth they are
asked only when the evidence settled something. The debate follows (the full debate,
or one round when nothing can settle the verdict; :meth:`CheckRun.deliberate`), and
the report is assembled last (:meth:`CheckRun.report`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from .agents.claims import extract_claims
from .agents.context import PanelContext, evidence_items
from .agents.debate import DebateOutcome
from .agents.judge import EvidenceSettled, Judged
from .agents.panel import ask_panel
from .agents.parts import NO_KNOWLEDGE
from .agents.pool import agent_failures, evidence_pool, findings
from .agents.quotes import Haystack, grounded_analyses
from .agents.summary import triaged_report
from .agents.triage import gathers_beside_triage, triage
from .agents.verdict import (
    allowed_outcomes,
    can_settle,
    decided_by_evidence,
    grounded_claims,
    settled_core,
)
from .agents.weighing import Weighing
from .check_debate import CheckDebate
from .check_evidence import EvidenceReading, Gathered, ReadClaims
from .check_search import SearchAgain
from .check_verdict import verdicted
from .config import EngineSettings
from .images.analysis import ImageEvidence
from .language import detect_language
from .llm.base import ChatMessage
from .llm.nli_backend import NLIStanceModel
from .llm.session import CheckSession
from .post import Ablation, Post, ProgressHook, ReadPost
from .records import notes
from .records.debate import Debate, JudgeRuling
from .records.notes import Note, note
from .report import Analyses, Dropped, Report, SearchRound, Triage, Usage
from .retrieval.pipeline import EntityGuidedRetrieval
from .run_progress import Progress

__all__ = ["CheckRun"]

log = logging.getLogger(__name__)
LEAD_CHARS = 300  # the post's first sentence, as a fact-check query


#: Looks at a post's read images (vision, reverse search) with the check's session
#: and the shared messages (system, post); the engine binds its backends.
ExamineImages = Callable[
    [ReadPost, CheckSession, tuple[ChatMessage, ...]], Coroutine[Any, Any, ImageEvidence]
]


class CheckRun:
    """One check of one post: its settings, its LLM session, its notes and timings.

    Args:
        settings: the engine's settings.
        retrieval: Stage 1.
        session: the LLM session of this check.
        read: the post as read (:meth:`Engine.read <zofia_engine.engine.Engine.read>`);
            a post not read yet (its text alone) is read here.
        ablation: parts of the method to leave out.
        on_progress: called (or awaited) with each progress event.
        prior: gives the judge's outcome probabilities on a content-free post, to
            correct its probabilities by (contextual calibration); asked only when
            the judge's ruling came with probabilities; ``None``: as they are.
        examine: looks at the post's images (vision, reverse search).
        stance_model: reads the claims instead of the verifier LLM (``[stance]``).

    Raises:
        InvalidPostError: a post not read yet has no text to check.
    """

    def __init__(
        self,
        settings: EngineSettings,
        retrieval: EntityGuidedRetrieval,
        session: CheckSession,
        read: ReadPost | Post,
        ablation: Ablation,
        on_progress: ProgressHook | None,
        prior: Callable[[], Awaitable[dict[str, float] | None]] | None = None,
        examine: ExamineImages | None = None,
        stance_model: NLIStanceModel | None = None,
    ) -> None:
        self.started = time.perf_counter()
        self.examine = examine
        self.prior = prior
        self.judge_prior: dict[str, float] | None = None
        self.settings = settings
        self.retrieval = retrieval
        self.session = session
        self.read = read = read if isinstance(read, ReadPost) else ReadPost.of(read)
        post = self.post = read.post
        self.ablation = ablation
        self.progress = Progress(on_progress, self.started)
        self.timings: dict[str, float] = {}
        self.dropped = Dropped()
        text = read.text
        self.notes: list[Note] = [note(change, "cleaned") for change in read.cleaned]
        self.panel = PanelContext.of_post(text, post, settings.agents, detect_language(text))
        encoder = retrieval.encoder
        self.reading = EvidenceReading(
            settings,
            session,
            self.panel,
            encoder,
            web=ablation.web,
            stance_model=stance_model,
            parser=retrieval.parser,
            knowledge=retrieval.wikipedia or NO_KNOWLEDGE,
        )
        self.debating = CheckDebate(
            settings, session, self.panel, self.progress, self.dropped, held=ablation.debate
        )
        if post.original_chars:
            self.notes.append(notes.post_cut(post.original_chars, len(post.text)))
        if self.panel.truncated:
            self.notes.append(notes.models_cut(self.panel.max_post_chars))
        self.notes += [notes.left_out(part) for part in ablation.removed]

    async def run(self) -> Report:
        """Triage, then gather, deliberate and report; a post with nothing to check gets
        the triage's short report instead. With ``[triage] overlap``, the gathering starts
        beside the triage and is dropped if there is nothing to check."""
        local = self.retrieval.local and self.session.local
        overlap = gathers_beside_triage(self.settings.triage, local=local)
        gathering = asyncio.create_task(self.gather()) if overlap else None
        try:
            found = await self.triage() if self.settings.triage.enabled else None
            if found is not None and found.kind != "claim":
                if gathering is not None:
                    gathering.cancel()
                    await asyncio.wait([gathering])
                    if not gathering.cancelled():
                        gathering.exception()  # a greeting's gathering that failed is moot
                usage, timings = self.usage_and_timings()
                report = triaged_report(
                    found,
                    usage,
                    timings,
                    self.notes,
                    images=list(self.read.findings),
                    caption=self.read.caption,
                    heard=self.read.heard,
                )
            else:
                gathered = await (gathering or self.gather())
                await self._verdict_ready(gathered, found)
                outcome = await self.deliberate(gathered)
                report = self.report(gathered, outcome, found)
        finally:
            if gathering is not None:
                gathering.cancel()  # a no-op once it is done
        await self.progress.emit("finished", "verdict", report.verdict)
        return report

    async def triage(self) -> Triage:
        """What kind of post this is (one short call on the post alone)."""
        work = triage(self.session, self.panel, self.settings.triage.min_confidence)
        found = await self.progress.stage("triage", work, self.timings)
        if found.status == "failed":
            self.notes.append(notes.triage_failed(found.error))
        elif found.overruled:
            self.notes.append(notes.triage_unsure(found.overruled))
        return found

    async def gather(self) -> Gathered:
        """Stage 1, the published fact-checks, the claims read against the evidence, and
        every analysis, each started as soon as what it needs is there."""
        session, panel, ab, progress = self.session, self.panel, self.ablation, self.progress
        settings, timings = self.settings, self.timings
        agents = settings.agents
        weighing = self._weighing()
        lead = (panel.sentences or [panel.text])[0][:LEAD_CHARS]
        full = agents.depth == "full"
        try:
            async with asyncio.TaskGroup() as tg:
                # The calls that start a chain go out first: they are on the critical path.
                extraction = (
                    tg.create_task(extract_claims(session, panel, agents)) if ab.claims else None
                )
                # At the full depth the panel works beside the evidence step; at the
                # adaptive depth it is asked only once the evidence can settle something.
                analysis = tg.create_task(self._panel()) if full else None
                published = tg.create_task(weighing.published([lead]))
                images = (
                    tg.create_task(self.examine(self.read, session, panel.shared))
                    if self.examine is not None and self.post.images
                    else None
                )
                stage1 = await progress.stage(
                    "retrieval",
                    self.retrieval.run(
                        panel.text,
                        published=self.post.published,
                        web=ab.web,
                        wikipedia=ab.wikipedia,
                        language=panel.post_language,
                    ),
                    timings,
                )
                panel.evidence = weighing.rated(evidence_items(stage1))
                read = self.reading.run(weighing, extraction, published, images)
                claims = await progress.stage("claims", read, timings)
        except BaseExceptionGroup as group:
            raise group.exceptions[0] from None
        searches = await self._search_again(weighing, claims, stage1.query)
        grounded = grounded_claims(claims.claims, panel.evidence)  # both fixed from here on
        if analysis is not None:
            analyses = analysis.result()
        elif can_settle(grounded, panel.evidence) and settled_core(claims.claims, grounded) is None:
            analyses = await self._panel()
        else:  # nothing settled, or the core claim settled: the panel cannot change it
            analyses = Analyses(held=False)
        seen = images.result() if images is not None else None
        self.notes += [*stage1.notes, *(note(n) for n in weighing.notes)]
        analyses = self._kept(analyses, claims, seen)
        sources = Haystack([self.panel.text, *(item.text for item in self.panel.evidence)])
        analyses, dropped = grounded_analyses(analyses, sources)
        self.dropped.quotes += dropped
        return Gathered(
            stage1, analyses, claims.claims, claims.tree, seen, sources, grounded, searches
        )

    def _kept(self, analyses: Analyses, claims: ReadClaims, seen: ImageEvidence | None) -> Analyses:
        """``analyses`` as they are, with what failed or was dropped on the way noted."""
        self.notes += [note(n) for n in (seen.notes if seen else [])]
        if claims.problem:
            self.notes.append(note(claims.problem, "step_failed"))
        self.notes += [note(n, "step_failed") for n in agent_failures(analyses, claims.claims)]
        self.dropped.claims += claims.dropped
        self.dropped.citations += sum(c.dropped_quotes for c in claims.claims)
        return analyses

    async def _search_again(
        self, weighing: Weighing, claims: ReadClaims, query: str
    ) -> list[SearchRound]:
        """Planned searches for a core claim the first one left unsettled (``claims`` is
        read again in place); the rounds run, if any."""
        again = SearchAgain(
            self.settings, self.session, self.panel, self.retrieval, self.reading, weighing
        )
        if not again.wanted(claims.claims):
            return []
        looped = again.run(claims.claims, query, published=self.post.published)
        claims.claims, searches = await self.progress.stage("search", looped, self.timings)
        return searches

    async def _panel(self) -> Analyses:
        """The linguist and the domain expert (:func:`.agents.panel.ask_panel`)."""

        async def stage(name: str, work: Awaitable[Any]) -> Any:
            return await self.progress.stage(name, work, self.timings)

        return await ask_panel(
            self.session,
            self.panel,
            self.settings.agents.linguist_dimensions,
            stage,
            self.reading.shown,
            linguist=self.ablation.linguist,
            expert=self.ablation.expert,
        )

    async def deliberate(self, gathered: Gathered) -> DebateOutcome:
        """The debate over the evidence pool, and the judge's ruling: the full debate when
        the evidence can settle a verdict (or at the full depth), else one round."""
        pool, citable = evidence_pool(self.panel, gathered.analyses, gathered.claims, gathered.tree)
        core = settled_core(gathered.claims, gathered.grounded)
        settled = EvidenceSettled(
            can_settle(gathered.grounded, self.panel.evidence),
            tuple(findings(self.panel, gathered.claims, gathered.grounded)),
            allowed_outcomes(gathered.claims, gathered.grounded),
        )
        # The adaptive depth holds the whole debate only where it can change the verdict:
        # something settled, but not the core claim (which decides it).
        full = self.settings.agents.depth == "full" or (settled.any and core is None)
        shown = [f.analysis for f in gathered.analyses.linguist]
        expert = gathered.analyses.expert
        if expert is not None:
            shown += [expert.knowledge_concordance, expert.logical_integrity]
        debate = self.debating.hold(
            pool, citable, shown, gathered.sources, settled=settled, full=full
        )
        outcome = await self.progress.stage("debate", debate, self.timings)
        failed_turns = [t for t in outcome.debate.turns if t.status == "failed"]
        if failed_turns:
            self.notes.append(notes.debate_turns_failed(len(failed_turns), failed_turns[0].error))
        if self.prior is not None and outcome.judged.outcomes is not None:
            self.judge_prior = await self.prior()  # nothing to correct without probabilities
        return outcome

    async def _verdict_ready(self, gathered: Gathered, triaged: Triage | None) -> None:
        """The early report of a verdict the evidence fixed (:func:`decided_by_evidence`)
        as a ``verdict_ready`` event, before the debate, timed as ``verdict_ms``."""
        evidence, grounded = self.panel.evidence, gathered.grounded
        require = self.settings.agents.require_evidence
        if decided_by_evidence(gathered.claims, evidence, grounded, require_evidence=require):
            self.timings["verdict_ms"] = round((time.perf_counter() - self.started) * 1000, 2)
            pending = JudgeRuling(round=0, decision=None, status="failed", error="not yet")
            early = DebateOutcome(debate=Debate(held=False), judged=Judged(ruling=pending))
            report = self.report(gathered, early, triaged, complete=False)
            await self.progress.emit("verdict_ready", "verdict", report.verdict, report=report)

    def report(
        self,
        gathered: Gathered,
        outcome: DebateOutcome,
        triaged: Triage | None = None,
        *,
        complete: bool = True,
    ) -> Report:
        """The report of the check: the verdict the evidence allows, timings, accounting;
        ``triaged``: what the triage found, when it ran; ``complete`` false: the early
        report, before the debate (nothing is noted or counted by it)."""
        debate = outcome.debate
        thresholds = self.settings.debate.early_stop == "thresholds"
        if complete and thresholds and debate.stopped_by == "judge":
            self.notes.append(notes.no_logprobs())
        found = verdicted(
            outcome.judged,
            self.judge_prior,
            gathered,
            self.panel.evidence,
            require_evidence=self.settings.agents.require_evidence,
        )
        if complete:  # the early report notes and counts nothing new
            self.notes += found.notes
            self.dropped.quotes += found.dropped_quotes
        ruled, confidence = found.ruled, found.confidence
        usage, timings = self.usage_and_timings(gathered.stage1.timings_ms)
        return Report(
            verdict=ruled.verdict,
            confidence=confidence,
            summary=found.summary,
            keywords=gathered.stage1.keywords,
            evidence=self.panel.evidence,
            claims=gathered.claims,
            analyses=gathered.analyses,
            debate=debate,
            usage=usage,
            timings=timings,
            notes=self.notes,
            basis=ruled.basis,
            lean=ruled.lean,
            search_mode=gathered.stage1.mode,
            tree=gathered.tree,
            images=gathered.images.findings if gathered.images else list(self.read.findings),
            caption=self.read.caption,
            heard=self.read.heard,
            dropped=self.dropped if complete else self.dropped.model_copy(),
            depth=self.settings.agents.depth,
            triage=triaged,
            searches=gathered.searches,
            complete=complete,
        )

    def usage_and_timings(
        self, stage1_ms: dict[str, float] | None = None
    ) -> tuple[Usage, dict[str, float]]:
        timings = self.timings
        timings.update({f"stage1.{k}": v for k, v in (stage1_ms or {}).items()})
        timings["llm_ms"] = round(sum(c.latency_ms for c in self.session.calls), 2)
        timings["total_ms"] = round((time.perf_counter() - self.started) * 1000, 2)
        return Usage.of(self.session.calls), timings

    def _weighing(self) -> Weighing:
        published = self.post.published
        cutoff = published - dt.timedelta(days=1) if published else None
        return Weighing(self.settings, self.session, self.panel, self.retrieval.factchecks, cutoff)
