"""Answers from the store: a post checked already (the same text, or a near repeat of
it, within the freshness window) is answered with the stored report at once, as a new
check row that repeats the original, with a moderator's latest review in force; only
from a check that may answer the asker's chat, and from another chat's, with only what
is shown across chats (:mod:`storage.other_chats`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable

import numpy as np

from storage.rows import CheckRow, RepeatKind
from storage.store import CheckStore
from zofia_engine.post import ReadPost
from zofia_engine.report import Report

from .handles import CheckHandle
from .records import Admission, Outcome
from .repeats import NearRepeats

__all__ = ["answer_from_store"]


async def answer_from_store(
    store: CheckStore,
    repeats: NearRepeats,
    read: ReadPost,
    digest: str,
    record: Callable[..., CheckRow],
    since: dt.datetime,
    who: Admission,
) -> tuple[CheckHandle | None, np.ndarray | None]:
    """The answer to an exact or near repeat checked since ``since`` that may answer the
    chat ``who`` asks in (:mod:`storage.other_chats`), or ``None``; and the post's
    vector, when the near-repeat search needed it. ``digest`` is the key of the post
    ``read``; ``record`` writes the request's row
    (:meth:`~bots.service.checks.CheckService.submit`'s)."""
    text, post = read.text, read.post
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
    near = await asyncio.to_thread(
        repeats.original, vector, text, post.language, since, who.platform, who.chat
    )
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
        report = store.reviewed_report(original.id, (row.platform, row.chat) if row.chat else None)
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
