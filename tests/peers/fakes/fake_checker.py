"""In-process stand-ins for the engine's ports, as httpx tests use ``MockTransport``.

:class:`FakeChecker` is a :class:`~zofia_engine.ports.Checker` that answers every
post with a scripted report: a test with it proves what the service and the bots
do around a check (repeats, joins, limits, cancellation, buttons), not that any
fact-checking happened. :class:`HashingEncoder` is a
:class:`~zofia_engine.ports.TextEncoder` whose cosine is the overlap of two texts'
words: the same words give 1.0, a changed word a little less, other words about 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import inspect
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bots.app.runtime import build_service
from bots.app.settings import Settings
from bots.service.checks import CheckHandle, CheckService
from bots.service.records import Message, Requester, ReviewRequest
from storage.reviews import Review
from zofia_engine.audio.reader import VoiceReader, read_post
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.reader import ImageReader
from zofia_engine.ports import FollowUpAnswer
from zofia_engine.post import Post, ProgressEvent, ProgressHook, ReadPost
from zofia_engine.report import (
    TRIAGED,
    ClaimResult,
    Confidence,
    Debate,
    DebateTurn,
    EvidenceItem,
    JudgeRuling,
    Lean,
    LLMCall,
    Quote,
    Report,
    Triage,
    Usage,
)

from ..fixtures.images import shared_ocr
from ..fixtures.store_fixtures import migrated_copy

__all__ = [
    "FakeChecker",
    "Gate",
    "HashingEncoder",
    "fake_service",
    "review_as",
    "scripted_report",
    "submit",
]

_WORD = re.compile(r"\w+")


class HashingEncoder:
    """Bag-of-words vectors, each word hashed to one of ``dimension`` axes."""

    def __init__(self, dimension: int = 256) -> None:
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            for word in _WORD.findall(text.casefold()):
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                row[int.from_bytes(digest, "little") % self._dimension] += 1.0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        unit: np.ndarray = rows / np.maximum(norms, 1e-12)
        return unit


def scripted_report(
    post: Post | ReadPost, *, verdict: str = "false", summary: str = "", tokens: int = 1500
) -> Report:
    """A whole report for ``post`` with ``verdict``, as the engine would give it: for an
    outcome, evidence, a claim, a one-round debate and usage (an ``unproven`` one with
    no quote and the panel's lean); for what triage found, the triage alone."""
    read = post if isinstance(post, ReadPost) else ReadPost.of(post)
    post = read.post.model_copy(update={"text": read.text})
    calls = [LLMCall(role="judge", step="debate:judge:1", backend="fake", prompt_tokens=tokens)]
    if verdict in TRIAGED:
        signs = ["a look-alike bank domain", "asks for a login"] if verdict == "scam" else []
        return Report(
            verdict=verdict,
            confidence=Confidence(basis="triage: no claim was checked"),
            summary=summary or f"Triage: {verdict}.",
            debate=Debate(held=False),
            usage=Usage.of(calls),
            timings={"total_ms": 1.0},
            triage=Triage(kind=verdict, reason=summary or "scripted", signs=signs),
        )
    evidence = [
        EvidenceItem(
            id="web-1",
            source="web",
            provider="web:fake",
            title="City council minutes",
            url="https://council.example.org/minutes",
            text="The council passed no such law.",
        )
    ]
    turns = [
        DebateTurn(round=1, side="pro", argument="The post names a real city.", cites=["post"]),
        DebateTurn(round=1, side="con", argument="The minutes show no law.", cites=["web-1"]),
    ]
    decision = "false" if verdict in ("unproven", "undetermined") else verdict
    ruling = JudgeRuling(round=1, decision=decision, reason=summary or "The minutes refute it.")
    grounded = verdict in ("true", "false", "misleading")
    label = {"true": "supports"}.get(verdict, "refutes")
    quotes = [Quote(text="passed no such law", evidence_id="web-1")] if grounded else []
    claim = ClaimResult(id="claim-0", kind="core", text=post.text[:80], label=label, quotes=quotes)
    return Report(
        verdict=verdict,
        confidence=Confidence(value=0.8 if grounded else None, basis="scripted"),
        summary=summary or f"Scripted verdict on: {post.text[:40]}",
        evidence=evidence,
        claims=[claim],
        debate=Debate(turns=turns, rulings=[ruling], rounds=1, max_rounds=5, decided_in_round=1),
        usage=Usage.of(calls),
        timings={"total_ms": 1.0},
        basis=["claim-0"] if grounded else [],
        lean=Lean(outcome="false", probability=0.62, settle="The council's minutes.")
        if verdict == "unproven"
        else None,
        images=list(read.findings),
        caption=read.caption,
        heard=read.heard,
    )


class Gate:
    """Holds each check at its debate until the test opens it: a check stays running for
    exactly as long as the test needs, however fast or slow the machine, and the test can
    wait until checks are held (:meth:`held`) instead of sleeping for them to start."""

    def __init__(self) -> None:
        self._open = asyncio.Event()
        self._arrived = asyncio.Condition()
        self.waiting = 0

    async def pass_through(self) -> None:
        """Wait here until the gate is open (what :meth:`FakeChecker.check` does)."""
        async with self._arrived:
            self.waiting += 1
            self._arrived.notify_all()
        try:
            await self._open.wait()
        finally:
            self.waiting -= 1

    async def held(self, n: int = 1, *, timeout_s: float = 30.0) -> None:
        """Return once ``n`` checks are held here at once; raise ``TimeoutError`` after
        ``timeout_s`` (only a broken service takes that long: the test fails, not hangs)."""
        async with asyncio.timeout(timeout_s), self._arrived:
            await self._arrived.wait_for(lambda: self.waiting >= n)

    def open(self) -> None:
        """Let the checks held go on, and every later one pass."""
        self._open.set()

    def close(self) -> None:
        """Hold the checks that come from now on."""
        self._open.clear()


@dataclass
class FakeChecker:
    """Answers every post with :func:`scripted_report`, after ``delay_s`` (and its
    ``gate``, if any).

    Attributes:
        runs: every post checked, in order (a repeat answered from the store is none);
            ``reads``: each as read (what reading found in its images).
        delay_s: how long a check takes (tests of joins, cancellation, shutdown).
        gate: hold each check at its debate until the test opens it: a test that needs a
            check running while it acts uses this, not ``delay_s``, so that timing decides
            nothing.
        fail: raise this instead of answering.
        verdict, summary, tokens: what the report says and costs.
        early: the verdict is fixed before the debate: a ``verdict_ready`` event with the
            early report (``complete`` false) comes before the debate (and its ``gate``).
        answer, answer_cites: what every follow-up question gets (the cites that name
            no evidence of the report are dropped; with none left, the report "does not
            answer"); ``questions`` records each question asked, in order.
    """

    delay_s: float = 0.0
    gate: Gate | None = None
    fail: BaseException | None = None
    verdict: str = "false"
    summary: str = ""
    tokens: int = 1500
    early: bool = False
    runs: list[Post] = field(default_factory=list)
    reads: list[ReadPost] = field(default_factory=list)
    answer: str = "The council's minutes show that no such law was passed [web-1]."
    answer_cites: tuple[str, ...] = ("web-1",)
    answer_tokens: int = 0  # what each follow-up's call is said to cost
    questions: list[str] = field(default_factory=list)
    # The real image reader (Pillow, RapidOCR): what an image post becomes is the
    # engine's rule, not the fake's. Its OCR is the session's one (:func:`shared_ocr`).
    reader: ImageReader = field(
        default_factory=lambda: ImageReader(ImageSettings(), ocr=shared_ocr())
    )

    # The real voice reader: where no transcriber is given (``voice``, pointed at the
    # fake transcription server), a voice note gets the engine's one sentence.
    voice: VoiceReader = field(default_factory=lambda: VoiceReader(AudioSettings(backend="none")))

    async def read(self, post: Post) -> ReadPost:
        return await read_post(post, self.reader, self.voice)

    async def check(self, read: ReadPost, *, on_progress: ProgressHook | None = None) -> Report:
        self.runs.append(read.post)
        self.reads.append(read)
        for stage in ("retrieval", "linguist", "debate"):
            if stage == "debate" and self.early:
                early = scripted_report(read, verdict=self.verdict, summary=self.summary)
                early = early.model_copy(update={"complete": False, "debate": Debate(held=False)})
                event = ProgressEvent(
                    kind="verdict_ready", stage="verdict", detail=self.verdict, report=early
                )
                await _emit(on_progress, event)
            await _emit(on_progress, ProgressEvent(kind="started", stage=stage))
            if stage == "debate" and self.gate is not None:
                await self.gate.pass_through()
            if stage == "debate" and self.delay_s:
                await asyncio.sleep(self.delay_s)
            await _emit(on_progress, ProgressEvent(kind="finished", stage=stage))
        if self.fail is not None:
            raise self.fail
        report = scripted_report(
            read,
            verdict=self.verdict,
            summary=self.summary,
            tokens=self.tokens,
        )
        await _emit(on_progress, ProgressEvent(kind="finished", stage="verdict"))
        return report

    async def follow_up(
        self, report: Report, question: str, *, language: str = ""
    ) -> FollowUpAnswer:
        """The scripted :attr:`answer`, citing what of :attr:`answer_cites` the report
        has: a test with it proves the plumbing around a follow-up, not an answer."""
        self.questions.append(question)
        known = {item.id for item in report.evidence}
        cites = tuple(c for c in self.answer_cites if c in known)
        if not cites:
            return FollowUpAnswer.unanswered(tokens=self.answer_tokens)
        return FollowUpAnswer(self.answer, cites, tokens=self.answer_tokens)


async def _emit(hook: ProgressHook | None, event: ProgressEvent) -> None:
    if hook is None:
        return
    result = hook(event)
    if inspect.isawaitable(result):
        await result


@contextlib.asynccontextmanager
async def fake_service(
    settings: Settings, checker: FakeChecker, *, clock: Callable[[], dt.datetime] | None = None
) -> AsyncIterator[CheckService]:
    """The real check service over the store ``settings`` name, checking with ``checker``
    and :class:`HashingEncoder` (its store on ``clock``, if given: the limits' windows pass
    when the test moves it); started, then closed with its database. A new SQLite store
    starts as a copy of the session's migrated one."""
    where = "" if settings.storage.is_postgres else settings.storage.sqlite_path
    if where and where != ":memory:":
        migrated_copy(Path(where).expanduser())
    service = build_service(settings, checker, HashingEncoder(), clock=clock)
    await service.start()
    try:
        yield service
    finally:
        await service.aclose()
        service.store.close()


async def submit(
    service: CheckService, post: Post | str, requester: Requester, *, recheck: bool = False
) -> CheckHandle:
    """One request taken whole (:meth:`CheckService.take`) and released once taken, as the
    API takes its checks: the handle of its check."""
    message = Message(post) if isinstance(post, str) else Message.of(post)
    async with service.take(message, requester, recheck=recheck) as handle:
        return handle


async def review_as(
    service: CheckService,
    check_id: str,
    asker: tuple[str, str],
    verdict: str,
    note: str = "",
    link: str = "",
    *,
    chat_id: str = "",
) -> Review:
    """A review of ``check_id`` by ``asker`` (a platform and a user id; ``cli``: the
    operator) in the chat ``chat_id`` (a moderator's), through the service's front door."""
    moderator = Requester(asker[0], asker[1], chat_id)
    return await service.review(ReviewRequest(check_id, moderator, verdict, note, link))
