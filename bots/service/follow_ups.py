"""Follow-up questions on a finished check (issue 29): a reader asks "why?" or "which
source?" about a verdict, and gets one answer from the report they were shown.

:func:`ask_follow_up` is :meth:`CheckService.follow_up
<bots.service.checks.CheckService.follow_up>`: the check must have been asked in the
requester's chat and have a report (a moderator's review in force, as the card shows
it); the request is then admitted against the requester's limits like a check (one
model call is work that a flood of questions must not get for free), refused when the
day's token budget (or the asker's or the chat's share of it) is spent, answered under
the engine's concurrency bound (a slot shared with the checks), and its tokens are
charged to the day's budget and the shares (``attempts.tokens``); the admission is
released whatever happened.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from storage.errors import CheckNotFoundError
from storage.store import CheckStore
from zofia_engine.ports import Answerer, FollowUpAnswer
from zofia_engine.report import Report

from .chat_operations import ChatOperations
from .limits import RequestLimits
from .records import NO_REPORT, Admission, FollowUp, NoReportError, Requester

__all__ = ["MAX_QUESTION", "ask_follow_up"]

log = logging.getLogger(__name__)

#: the longest question taken, in characters (a longer one is cut by the engine too)
MAX_QUESTION = 1000


class _Slots(Protocol):
    @property
    def count(self) -> int: ...

    def slot(self, chat: str) -> AbstractAsyncContextManager[None]: ...


class _Service(Protocol):
    """What of the check service a follow-up needs (:class:`bots.service.checks.CheckService`)."""

    answerer: Answerer
    store: CheckStore
    chats: ChatOperations
    limits: RequestLimits
    clock: Callable[[], dt.datetime]

    @property
    def runs(self) -> _Slots: ...

    def admit(self, requester: Requester) -> Admission: ...

    def release(self, admission: Admission) -> None: ...


def _report(service: _Service, check_id: str, requester: Requester) -> Report:
    """The report check ``check_id`` shows, if it was asked in the requester's chat
    (any chat when the requester names none: the CLI) (blocking)."""
    if requester.chat_id:
        row = service.chats.check_in_chat(check_id, requester.platform, requester.chat_id)
        if row is None:
            raise CheckNotFoundError(f"no check {check_id!r} in this chat")
    found = service.store.report_for(check_id)
    if found is None:
        if service.store.checks.get(check_id) is None:
            raise CheckNotFoundError(f"no check {check_id!r}")
        raise NoReportError(NO_REPORT)
    return found[1]


async def ask_follow_up(
    service: _Service,
    check_id: str,
    question: str,
    requester: Requester,
    *,
    language: str = "",
) -> FollowUp:
    """Answer ``question`` about check ``check_id`` for ``requester``.

    Args:
        language: the reply language (``""``: English).

    Raises:
        ValueError: the question is empty.
        CheckNotFoundError: no such check, or not one asked in the requester's chat.
        NoReportError: the check has no report (running, failed, or expired).
        RateLimitedError: a limit of the requester's is reached, or the day's budget
            (``BusyError``) or their share of it is spent; nothing was asked.
        StepFailed: the model's call failed, or its reply could not be read.
    """
    question = question.strip()[:MAX_QUESTION]
    if not question:
        raise ValueError("the question is empty")
    # Refused before any limit counts: a question about nothing costs nothing.
    report = await asyncio.to_thread(_report, service, check_id, requester)
    admission = await asyncio.to_thread(service.admit, requester)
    try:
        spent = service.limits.refuse_if_spent
        await asyncio.to_thread(spent, admission, service.runs.count, service.clock())
        async with service.runs.slot(admission.chat):
            answer = await service.answerer.follow_up(report, question, language=language)
        if answer.tokens:
            charge = service.store.attempts.charge
            await asyncio.to_thread(charge, admission.attempt_id, answer.tokens, check_id)
    finally:
        await asyncio.to_thread(service.release, admission)  # never raises
    by_id = {item.id: item for item in report.evidence}
    sources = tuple(by_id[i] for i in answer.cites if i in by_id)
    if answer.answered and not sources:  # an answer must rest on the report's evidence
        answer = FollowUpAnswer.unanswered()
    return FollowUp(check_id, answer, sources)
