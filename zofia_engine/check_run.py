"""One check's run: the panel's work in the order the method gives it.

Work that needs only the post starts at once, while Stage 1 retrieves: the five
linguist conversations, the expert's domain detection and the claim extraction
(:meth:`CheckRun.gather`). The expert's analysis and the claim verification follow
as soon as the evidence is in; the debate starts when every analysis is done
(:meth:`CheckRun.deliberate`); the report is assembled last (:meth:`CheckRun.report`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

from .agents.claims import PassageIndex, extract_claims, split_passages, verify_claims
from .agents.context import PanelContext, evidence_items
from .agents.debate import DebateOutcome, hold_debate
from .agents.early_stop import EarlyStop
from .agents.expert import analyse_as_expert, detect_domain
from .agents.judge import calibrated, final_ruling
from .agents.linguist import analyse_language
from .agents.radar import hold_radar_debate
from .agents.triage import triage
from .agents.verdict import fallback_summary, triaged_report, verdict_of
from .config import EngineSettings
from .llm.base import ChatMessage
from .llm.session import CheckSession, StepFailed
from .post import Ablation, Post, ProgressEvent, ProgressHook
from .prompting import render
from .report import (
    Analyses,
    ClaimResult,
    Debate,
    ExpertFinding,
    JudgeRuling,
    LinguistFinding,
    Report,
    Triage,
    Usage,
)
from .retrieval.models import Stage1Result
from .retrieval.ner.sentences import split_sentences
from .retrieval.pipeline import EntityGuidedRetrieval
from .text import checkable_text, whole_sentences

__all__ = ["CheckRun"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class _Progress:
    """Sends events to the caller's hook; a failing hook is logged, never fatal."""

    def __init__(self, hook: ProgressHook | None, started: float) -> None:
        self.hook = hook
        self.started = started

    async def emit(
        self, kind: str, stage: str, detail: str = "", round_no: int | None = None
    ) -> None:
        if self.hook is None:
            return
        event = ProgressEvent(
            kind=kind,
            stage=stage,
            detail=detail,
            round=round_no,
            elapsed_ms=round((time.perf_counter() - self.started) * 1000, 1),
        )
        try:
            result = self.hook(event)
            if inspect.isawaitable(result):
                await result
        except Exception:  # a display problem must not lose the check
            log.exception("progress hook failed on %s", event)

    async def stage(self, name: str, work: Awaitable[T], timings: dict[str, float]) -> T:
        """Await ``work`` between started/finished events, timing it as ``<name>_ms``."""
        await self.emit("started", name)
        t = time.perf_counter()
        result = await work
        timings[f"{name}_ms"] = round((time.perf_counter() - t) * 1000, 2)
        await self.emit("finished", name, _summary(result))
        return result


def _summary(result: Any) -> str:
    if isinstance(result, Stage1Result):
        documents = len(result.web) + len(result.wikipedia)
        return f"{len(result.keywords)} keywords, {documents} documents"
    if isinstance(result, list):
        return f"{sum(1 for r in result if getattr(r, 'status', 'ok') == 'ok')} of {len(result)} ok"
    if isinstance(result, ExpertFinding):
        return result.expert_role if result.status == "ok" else f"failed: {result.error}"
    return ""


@dataclass
class Gathered:
    """What the panel has before the debate: Stage 1's result and every analysis."""

    stage1: Stage1Result
    analyses: Analyses
    claims: list[ClaimResult]


class CheckRun:
    """One check of one post: its settings, its LLM session, its notes and timings.

    Args:
        settings: the engine's settings.
        retrieval: Stage 1.
        session: the LLM session of this check.
        post: the post.
        ablation: parts of the method to leave out.
        on_progress: called (or awaited) with each progress event.
        prior: the judge's outcome probabilities on a content-free post, to correct
            its probabilities by (contextual calibration); ``None``: as they are.

    Raises:
        InvalidPostError: the post has no text to check.
    """

    def __init__(
        self,
        settings: EngineSettings,
        retrieval: EntityGuidedRetrieval,
        session: CheckSession,
        post: Post,
        ablation: Ablation,
        on_progress: ProgressHook | None,
        prior: dict[str, float] | None = None,
    ) -> None:
        self.started = time.perf_counter()
        self.prior = prior
        self.settings = settings
        self.retrieval = retrieval
        self.session = session
        self.post = post
        self.ablation = ablation
        self.progress = _Progress(on_progress, self.started)
        self.timings: dict[str, float] = {}
        text, self.degraded = checkable_text(post.text)
        agents = settings.agents
        self.ctx = PanelContext(
            text,
            published=post.published,
            origin=post.origin,
            url=post.url,
            language=post.language,
            max_post_chars=agents.max_post_chars,
            max_evidence_chars=agents.max_evidence_chars,
        )
        if post.original_chars:
            self.degraded.append(
                f"the post had {post.original_chars:,} characters; only its first "
                f"{len(post.text):,} were checked"
            )
        if self.ctx.truncated:
            self.degraded.append(
                f"the models saw the post's first {agents.max_post_chars} characters"
            )
        self.degraded += [f"left out for this check: {part}" for part in ablation.removed]

    async def run(self) -> Report:
        """Triage, then gather, deliberate and report; a post with nothing to check gets
        the triage's short report instead."""
        found = await self.triage() if self.settings.triage.enabled else None
        if found is not None and found.kind != "claim":
            report = triaged_report(found, *self._usage_and_timings(), self.degraded)
        else:
            gathered = await self.gather()
            outcome = await self.deliberate(gathered)
            report = self.report(gathered, outcome)
            report.triage = found
        await self.progress.emit("finished", "verdict", report.verdict)
        return report

    async def triage(self) -> Triage:
        """What kind of post this is (one short call on the post alone)."""
        work = triage(self.session, self.ctx, self.settings.triage.min_confidence)
        found = await self.progress.stage("triage", work, self.timings)
        if found.status == "failed":
            self.degraded.append(f"triage failed ({found.error}); the post was checked in full")
        elif found.overruled:
            self.degraded.append(
                f"triage leaned {found.overruled} without enough confidence; checked in full"
            )
        return found

    async def gather(self) -> Gathered:
        """Stage 1 and every analysis, each started as soon as what it needs is there."""
        session, ctx, ab, progress = self.session, self.ctx, self.ablation, self.progress
        agents, timings = self.settings.agents, self.timings
        try:
            async with asyncio.TaskGroup() as tg:
                # The calls that start a chain go out first: they are on the critical path.
                domain = tg.create_task(detect_domain(session, ctx)) if ab.expert else None
                extraction = (
                    tg.create_task(extract_claims(session, ctx, agents)) if ab.claims else None
                )
                linguist = tg.create_task(
                    progress.stage(
                        "linguist",
                        analyse_language(session, ctx, agents.linguist_dimensions),
                        timings,
                    )
                    if ab.linguist
                    else _nothing(list[LinguistFinding]())
                )
                stage1 = await progress.stage(
                    "retrieval",
                    self.retrieval.run(
                        ctx.text,
                        published=self.post.published,
                        web=ab.web,
                        wikipedia=ab.wikipedia,
                    ),
                    timings,
                )
                ctx.evidence = evidence_items(stage1)
                expert = (
                    tg.create_task(progress.stage("expert", self._expert(domain), timings))
                    if domain is not None
                    else None
                )
                claims = (
                    tg.create_task(progress.stage("claims", self._claims(extraction), timings))
                    if extraction is not None
                    else None
                )
        except BaseExceptionGroup as group:
            raise group.exceptions[0] from None
        self.degraded += stage1.degraded
        analyses = Analyses(linguist=linguist.result(), expert=expert.result() if expert else None)
        claim_results, claim_problem = claims.result() if claims else ([], "")
        if claim_problem:
            self.degraded.append(claim_problem)
        self.degraded += _agent_failures(analyses, claim_results)
        return Gathered(stage1, analyses, claim_results)

    async def deliberate(self, gathered: Gathered) -> DebateOutcome:
        """The debate over the evidence pool, and the judge's ruling."""
        pool, citable = self._pool(gathered.analyses, gathered.claims)
        outcome = await self.progress.stage("debate", self._debate(pool, citable), self.timings)
        failed_turns = [t for t in outcome.debate.turns if t.status == "failed"]
        if failed_turns:
            self.degraded.append(
                f"{len(failed_turns)} debate turn(s) failed: {failed_turns[0].error}"
            )
        return outcome

    def report(self, gathered: Gathered, outcome: DebateOutcome) -> Report:
        """The report of the check: the verdict the evidence allows, timings, accounting."""
        judged, debate = outcome.judged, outcome.debate
        if self.settings.debate.early_stop == "thresholds" and debate.stopped_by == "judge":
            self.degraded.append("no token probabilities: the judge's own word ended the debate")
        outcomes = judged.outcomes
        if outcomes is not None and self.prior is not None:
            outcomes = calibrated(outcomes, self.prior)
        ruled, confidence = verdict_of(
            judged.ruling,
            outcomes,
            gathered.claims,
            require_evidence=self.settings.agents.require_evidence,
            no_logprobs=judged.completion is not None and not judged.completion.logprobs,
        )
        if ruled.verdict == "undetermined":
            self.degraded.append(f"no verdict: the judge failed ({judged.ruling.error})")
        usage, timings = self._usage_and_timings(gathered.stage1.timings_ms)
        return Report(
            verdict=ruled.verdict,
            confidence=confidence,
            summary=whole_sentences(judged.ruling.reason)
            or fallback_summary(ruled.verdict, judged.ruling.error),
            keywords=gathered.stage1.keywords,
            evidence=self.ctx.evidence,
            claims=gathered.claims,
            analyses=gathered.analyses,
            debate=debate,
            usage=usage,
            timings=timings,
            degraded=self.degraded,
            basis=ruled.basis,
            lean=ruled.lean,
        )

    def _usage_and_timings(
        self, stage1_ms: dict[str, float] | None = None
    ) -> tuple[Usage, dict[str, float]]:
        timings = self.timings
        timings.update({f"stage1.{k}": v for k, v in (stage1_ms or {}).items()})
        timings["llm_ms"] = round(sum(c.latency_ms for c in self.session.calls), 2)
        timings["total_ms"] = round((time.perf_counter() - self.started) * 1000, 2)
        return Usage.of(self.session.calls), timings

    async def _expert(self, domain: asyncio.Task[Any]) -> ExpertFinding:
        return await analyse_as_expert(self.session, self.ctx, await domain)

    async def _claims(
        self, extraction: asyncio.Task[list[ClaimResult] | StepFailed]
    ) -> tuple[list[ClaimResult], str]:
        # Index the web passages while the extractor may still be writing.
        agents = self.settings.agents
        passages = split_passages(self.ctx.evidence, split_sentences, agents.chunk_sentences)
        encoder = self.retrieval.encoder
        index = await asyncio.to_thread(PassageIndex.build, passages, encoder)
        claims = await extraction
        if isinstance(claims, StepFailed):
            return [], f"claim extraction failed: {claims.reason}"
        verified = await verify_claims(self.session, self.ctx, claims, index, encoder, agents)
        return verified, ""

    def _pool(
        self, analyses: Analyses, claims: list[ClaimResult]
    ) -> tuple[list[ChatMessage], list[str]]:
        """The evidence pool of Algorithm 1: documents, then the panel's analyses."""
        lines = []
        done = [f for f in analyses.linguist if f.status == "ok"]
        if done:
            text = " | ".join(f"{f.dimension} (leans {f.lean}): {f.analysis}" for f in done)
            lines.append({"id": "linguist", "text": f"Linguist. {text}"})
        e = analyses.expert
        if e is not None and e.status == "ok":
            lines.append(
                {
                    "id": "expert",
                    "text": f"{e.expert_role} (leans {e.lean}). Knowledge: "
                    f"{e.knowledge_concordance} Logic: {e.logical_integrity}",
                }
            )
        checked = [c for c in claims if c.label is not None]
        if checked:
            text = " | ".join(f'{c.kind} claim "{c.text}": {c.label}. {c.reason}' for c in checked)
            lines.append({"id": "claims", "text": f"Claim verification. {text}"})
        ctx = self.ctx
        pool = [ctx.evidence_message(), ChatMessage("user", render("analyses", lines=lines))]
        citable = ["post", *(item.id for item in ctx.evidence), *(line["id"] for line in lines)]
        return pool, citable

    async def _debate(self, pool: list[ChatMessage], citable: list[str]) -> DebateOutcome:
        session, ctx, d = self.session, self.ctx, self.settings.debate
        if not self.ablation.debate:
            judged = await final_ruling(session, ctx, pool, 0)
            debate = Debate(style=d.style, held=False, rulings=[judged.ruling], forced=True)
            return DebateOutcome(debate=debate, judged=judged)

        async def on_round(ruling: JudgeRuling) -> None:
            word = ruling.decision or "failed"
            await self.progress.emit("round", "debate", word, ruling.round)

        stop_margin, confidence = d.taus(session.routes["judge"].model)
        controller = EarlyStop(d.early_stop, stop_margin, confidence)
        if d.style == "radar":
            return await hold_radar_debate(
                session, ctx, pool, citable, max_rounds=d.max_rounds, controller=controller,
                on_round=on_round,
            )  # fmt: skip
        return await hold_debate(
            session,
            ctx,
            pool,
            citable,
            max_rounds=d.max_rounds,
            min_rounds=min(d.min_rounds, d.max_rounds),
            controller=controller,
            on_round=on_round,
        )


async def _nothing(value: T) -> T:
    return value


def _agent_failures(analyses: Analyses, claims: list[ClaimResult]) -> list[str]:
    notes = []
    failed = [f for f in analyses.linguist if f.status == "failed"]
    if failed:
        names = ", ".join(f.dimension for f in failed)
        notes.append(f"linguist failed on {names}: {failed[0].error}")
    if analyses.expert is not None and analyses.expert.status == "failed":
        notes.append(f"domain expert failed: {analyses.expert.error}")
    elif analyses.expert is not None and analyses.expert.error:
        notes.append(analyses.expert.error)
    bad = [c for c in claims if c.status == "failed"]
    if bad:
        notes.append(f"verification of {len(bad)} claim(s) failed: {bad[0].error}")
    dropped = sum(c.dropped_quotes for c in claims)
    if dropped:
        notes.append(f"{dropped} quote(s) not found in the retrieved text were dropped")
    return notes
