"""Answers from the store: a post checked already (the same text, or a near repeat of
it, within the freshness window) is answered with the stored report at once, as a new
check row that repeats the original, with a moderator's latest review in force; only
from a check that may answer the asker's chat, and from another chat's, with only what
is shown across chats (:mod:`storage.other_chats`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import numpy as np

from storage.rows import CheckRow, RepeatKind
from storage.store import CheckStore
from zofia_engine.report import Report

from .delivery import Intake, Parts
from .handles import CheckHandle
from .records import Outcome
from .shown import shown_report

__all__ = ["answer_from_store"]


async def answer_from_store(
    parts: Parts, intake: Intake
) -> tuple[CheckHandle | None, np.ndarray | None]:
    """The answer to ``intake`` from an exact or near repeat checked within the window
    that may answer the chat its asker asks in (:mod:`storage.other_chats`), or ``None``;
    and the post's vector, when the near-repeat search needed it."""
    store, repeats, record, who = parts.store, parts.repeats, intake.record, intake.admission
    text, post, digest = intake.read.text, intake.read.post, intake.digest
    since = intake.now - parts.window
    where = {"platform": who.platform, "chat": who.chat}
    repeat = await asyncio.to_thread(store.checks.find_exact, digest, since, **where)
    if repeat is not None:
        answered = await _answer(store, record, repeat, "exact", 1.0)
        if answered is not None:
            return answered, None
    if post.images:  # a near text is not the same image
        return None, None
    vector = await repeats.vector(text)
    # The index search and the word alignment are CPU work: off the event loop.
    near = await asyncio.to_thread(repeats.original, vector, intake.read, since, who)
    if near is not None:
        return await _answer(store, record, near[0], "near", near[1]), vector
    return None, vector


async def _answer(
    store: CheckStore,
    record: Callable[..., CheckRow],
    original: CheckRow,
    kind: RepeatKind,
    score: float,
) -> CheckHandle | None:
    def stored() -> tuple[CheckRow, Report] | None:
        # The latest review in force in the asker's chat: its verdict, the machine's noted;
        # and from another chat, only what is shown across chats.
        if store.reports.get(original.id) is None:  # purged since: check it again
            return None
        row = record(status="done", repeat_of=original.id, repeat_kind=kind)
        report = shown_report(store, original.id, (row.platform, row.chat) if row.chat else None)
        return None if report is None else (row, report)

    found = await asyncio.to_thread(stored)
    if found is None:
        return None
    row, report = found
    future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
    future.set_result(
        Outcome(row.id, report, kind, original.id, original.created_at, round(score, 4))
    )
    return CheckHandle(row.id, future)
