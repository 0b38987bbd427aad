"""The engine: one post in, one report out, with progress events on the way.

``Engine`` holds what lives as long as the process (Stage 1's models, the LLM
backends); each check is a :class:`~zofia_engine.check_run.CheckRun`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from .agents.context import PanelContext
from .agents.follow_up import answer_follow_up
from .agents.judge import final_ruling
from .audio.reader import VoiceReader, read_post
from .check_run import CheckRun
from .config import EngineSettings, StanceSettings
from .contacts import report_without_contacts
from .images.analysis import ImageEvidence, examine_images
from .images.reader import ImageReader
from .images.reverse import ReverseImageBackend, reverse_backend
from .language import load_detector
from .llm.base import ChatMessage
from .llm.nli_backend import NLIStanceModel
from .llm.router import LLMRouter
from .llm.session import CheckSession
from .ports import FollowUpAnswer
from .post import Ablation, Post, ProgressEvent, ProgressHook, ReadPost
from .report import Report
from .retrieval.pipeline import EntityGuidedRetrieval

__all__ = ["CONTENT_FREE", "Engine"]

#: The content-free post of contextual calibration (Zhao et al. 2021): no claim at all.
CONTENT_FREE = "N/A"


class Engine:
    """ZoFia end to end.

    Args:
        settings: the checked settings (``EngineSettings()`` is the offline default).
        retrieval: a Stage 1 pipeline to use instead of the one the settings build.
        llm: an LLM router to use instead of the one the settings build.

    Use ``async with Engine(settings) as engine:`` and ``await engine.check(post)``; the
    check service reads first (``await engine.read(post)``) and checks what it read.
    """

    def __init__(
        self,
        settings: EngineSettings | None = None,
        *,
        retrieval: EntityGuidedRetrieval | None = None,
        llm: LLMRouter | None = None,
    ) -> None:
        self.settings = settings or EngineSettings()
        self.retrieval = retrieval or EntityGuidedRetrieval(self.settings)
        self.llm = llm or LLMRouter(self.settings.llm)
        self.images = ImageReader(self.settings.images)
        self.voice = VoiceReader(self.settings.audio)
        self.reverse: ReverseImageBackend | None = reverse_backend(self.settings.images.reverse)
        self.stance_model = _stance_model(self.settings.stance)
        self._prior: dict[str, float] | None = None
        self._prior_lock = asyncio.Lock()
        self._prior_asked = False

    async def load(self) -> None:
        """Load every model now, so the first check does not wait for it; all but the
        transcriber's (``[audio] backend = "embedded"``), which the first voice note
        loads: most deployments hear few, and a bench or a calibration none."""
        await self.retrieval.load()
        await self.llm.load()
        await asyncio.to_thread(self.images.load)  # the OCR, for the first image post
        await asyncio.to_thread(load_detector)  # the post's language, for the first check
        if self.stance_model is not None:
            await asyncio.to_thread(self.stance_model.load)

    async def aclose(self) -> None:
        await self.retrieval.aclose()
        await self.llm.aclose()
        await self.voice.aclose()
        if self.reverse is not None:
            await self.reverse.aclose()

    async def __aenter__(self) -> Engine:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def check(
        self,
        read: ReadPost | Post | str,
        *,
        on_progress: ProgressHook | None = None,
        ablation: Ablation | None = None,
    ) -> Report:
        """Fact-check a post: ``read`` as :meth:`read` gave it, or a post (or just its
        text), read first.

        Args:
            on_progress: called (or awaited) with each :class:`ProgressEvent`.
            ablation: parts of the method to leave out (evaluation only).

        Returns:
            The report; parts that failed are listed in ``report.degraded``. What its
            models wrote carries no link, handle or phone number that its evidence does
            not (:func:`~zofia_engine.contacts.report_without_contacts`).

        Raises:
            InvalidPostError: a post not yet read has no text to check.

        Cancelling the awaiting task cancels every model call of the check.
        """
        if not isinstance(read, ReadPost):
            read = await self.read(Post(text=read) if isinstance(read, str) else read)
        run = CheckRun(
            self.settings,
            self.retrieval,
            self.llm.session(),
            read,
            ablation or Ablation(),
            on_progress,
            self.judge_prior if self.settings.debate.contextual_calibration else None,
            self._examine,
            self.stance_model,
        )
        # No report leaves with a link or a phone number its evidence does not carry.
        return report_without_contacts(await run.run())

    async def read(self, post: Post) -> ReadPost:
        """``post`` read once: its voice note heard (its words join the post's text
        under their marker), its images decoded, cleaned of metadata and read (their
        text joins the post's, each image's under its marker), its text cleaned
        (:func:`~zofia_engine.audio.reader.read_post`).

        Raises:
            InvalidPostError: the voice note or an image is refused, or there is no text
                anywhere; the message is one sentence for the user.
        """
        return await read_post(post, self.images, self.voice)

    async def follow_up(
        self, report: Report, question: str, *, language: str = ""
    ) -> FollowUpAnswer:
        """Answer a reader's ``question`` about ``report`` in one call of the judge's
        route, from the report alone, citing only its evidence
        (:func:`~zofia_engine.agents.follow_up.answer_follow_up`).

        Raises:
            StepFailed: the model's call failed, or its reply could not be read.
        """
        return await answer_follow_up(
            self.llm.session(),
            report,
            question,
            language=language,
            max_evidence_chars=self.settings.agents.max_evidence_chars,
            encoder=self.retrieval.encoder,
        )

    async def _examine(
        self, read: ReadPost, session: CheckSession, shared: tuple[ChatMessage, ...]
    ) -> ImageEvidence:
        return await examine_images(
            read,
            session,
            shared,
            vision=self.llm.has_vision,
            reverse=self.reverse,
            max_results=self.settings.images.reverse.max_results,
        )

    async def judge_prior(self) -> dict[str, float] | None:
        """The judge's outcome probabilities on a content-free post (contextual
        calibration's prior), asked once per engine; ``None`` without token
        probabilities."""
        async with self._prior_lock:
            if not self._prior_asked:
                panel = PanelContext(CONTENT_FREE)
                judged = await final_ruling(
                    self.llm.session(), panel, [panel.evidence_message()], 0
                )
                self._prior = judged.ruling.probabilities
                self._prior_asked = judged.ruling.status == "ok"  # a failed call is asked again
        return self._prior

    async def stream(
        self, post: Post | str, *, ablation: Ablation | None = None
    ) -> AsyncIterator[ProgressEvent | Report]:
        """The check as an async iterator: progress events, then the report last.

        Leaving the loop early cancels the check.
        """
        queue: asyncio.Queue[ProgressEvent | Report | BaseException] = asyncio.Queue()

        async def run() -> None:
            try:
                queue.put_nowait(await self.check(post, on_progress=queue.put, ablation=ablation))
            except Exception as exc:
                queue.put_nowait(exc)

        task = asyncio.create_task(run())
        try:
            while True:
                item = await queue.get()
                if isinstance(item, BaseException):
                    raise item
                yield item
                if isinstance(item, Report):
                    return
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _stance_model(settings: StanceSettings) -> NLIStanceModel | None:
    """The stance model ``[stance]`` names (loaded on first use), or ``None`` for the LLM."""
    if settings.backend != "nli":
        return None
    return NLIStanceModel(
        settings.model,
        device=settings.device,
        batch_size=settings.batch_size,
        labels=dict(settings.labels),
    )
