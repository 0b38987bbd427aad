"""Follow-up questions on a finished check (issue 29): a reader asks "why?" or "which
source?" about a verdict, and gets one answer from the report they were shown.

:meth:`CheckService.follow_up <bots.service.checks.CheckService.follow_up>` finds the
report the check shows in the requester's chat (a moderator's review in force, as the
card shows it) and admits the question against the requester's limits like a check (one
model call is work that a flood of questions must not get for free); then
:func:`ask_follow_up` refuses it when the day's token budget (or the asker's or the
chat's share of it) is spent, answers it under the engine's concurrency bound (a slot
shared with the checks), and charges its tokens to the day's budget and the shares
(``attempts.tokens``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Protocol

from storage.store import CheckStore
from zofia_engine.ports import Answerer, FollowUpAnswer
from zofia_engine.report import Report

from .delivery import CardDelivery, StoreThreads
from .fair_slots import FairSlots
from .limits import RequestLimits
from .records import Admission, FollowUp

__all__ = ["MAX_QUESTION", "ask_follow_up"]

#: the longest question taken, in characters (a longer one is cut by the engine too)
MAX_QUESTION = 1000


class _Service(Protocol):
    """What of the check service a follow-up needs (:class:`bots.service.checks.CheckService`)."""

    store: CheckStore
    limits: RequestLimits
    slots: FairSlots
    threads: StoreThreads
    delivery: CardDelivery
    clock: Callable[[], dt.datetime]

    @property
    def engine(self) -> Answerer: ...


async def ask_follow_up(
    service: _Service,
    admission: Admission,
    asked: tuple[str, Report],
    question: str,
    *,
    language: str = "",
) -> FollowUp:
    """Answer ``question`` (stripped, not empty) about ``asked`` (a check and the report
    it shows) for the request ``admission`` let in, in ``language`` (``""``: English).

    Raises:
        RateLimitedError: the day's budget (``BusyError``) or the asker's or the chat's
            share of it is spent; nothing was asked.
        StepFailed: the model's call failed, or its reply could not be read.
    """
    run, (check_id, report) = service.threads.run, asked
    pending = service.delivery.pending()
    await run(service.limits.refuse_if_spent, admission, pending, service.clock())
    async with service.slots.slot(admission.chat):
        answer = await service.engine.follow_up(report, question, language=language)
    if answer.tokens:
        await run(service.store.attempts.charge, admission.attempt_id, answer.tokens, check_id)
    by_id = {item.id: item for item in report.evidence}
    sources = tuple(by_id[i] for i in answer.cites if i in by_id)
    if answer.answered and not sources:  # an answer must rest on the report's evidence
        answer = FollowUpAnswer.unanswered()
    return FollowUp(check_id, answer, sources)
