"""The store, as the bots and the report pages reach it: awaited, off the event loop.

Every store call is synchronous and may wait: for the store's lock while another
thread writes, for PostgreSQL's write lock (up to its ``lock_timeout``) or for a lost
connection to come back. On the event loop such a wait would stop every chat, every
progress edit and every page at once. :func:`off_loop` runs a call on one of the
store's own threads (so a stuck store cannot take the threads the engine's work uses
as well) and :class:`StoreCalls` names the calls the bots make, written once here
rather than at every call site.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

from bots.service.checks import CheckService
from bots.service.records import Admission, Requester
from storage.rows import CheckRow
from zofia_engine.report import Report

__all__ = ["STORE_THREADS", "StoreCalls", "off_loop"]

P = ParamSpec("P")
T = TypeVar("T")

#: how many store calls of one process may wait at once; more queue for a thread
STORE_THREADS = 8
log = logging.getLogger(__name__)
_threads = ThreadPoolExecutor(max_workers=STORE_THREADS, thread_name_prefix="zofia-store")


async def off_loop(call: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``call(*args, **kwargs)`` on a store thread (with this task's context variables),
    awaited. The call starts at once: a caller cancelled meanwhile stops waiting for it,
    not the call."""
    context = contextvars.copy_context()
    work = functools.partial(context.run, call, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_threads, work)


class StoreCalls:
    """What the bots read and write through the check service, each awaited off the loop.

    Args:
        service: the started check service.
    """

    def __init__(self, service: CheckService) -> None:
        self.service = service
        self._releasing: set[asyncio.Task[None]] = set()

    async def admit(self, requester: Requester) -> Admission:
        """Admit the request before any work, or refuse it (``RateLimitedError``)."""
        return await off_loop(self.service.admit, requester)

    @contextlib.asynccontextmanager
    async def admitted(self, requester: Requester) -> AsyncIterator[Admission]:
        """The request admitted (:meth:`admit`: a refusal raises here) for the block, and
        released when the block ends, however it ends. An admission still on its store
        thread when the caller is cancelled is released as soon as it lands: an attempt
        left open would hold a place in its sender's private line for 30 minutes."""
        landing = asyncio.ensure_future(self.admit(requester))
        try:
            admission = await asyncio.shield(landing)
        except asyncio.CancelledError:
            landing.add_done_callback(self._release_landed)
            raise
        try:
            yield admission
        finally:
            await asyncio.shield(self.release(admission))

    def _release_landed(self, landing: asyncio.Future[Admission]) -> None:
        if landing.cancelled() or landing.exception() is not None:
            return  # refused, or never written
        task = asyncio.get_running_loop().create_task(self.release(landing.result()))
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    async def release(self, admission: Admission) -> None:
        """The request is answered (:meth:`~bots.service.checks.CheckService.release`)."""
        await off_loop(self.service.release, admission)

    async def chat_setting(self, platform: str, chat_id: str, key: str, default: Any = None) -> Any:
        return await off_loop(self.service.chats.setting, platform, chat_id, key, default)

    async def chat_settings(
        self, platform: str, chat_id: str, defaults: dict[str, Any]
    ) -> dict[str, Any]:
        """Several settings of one chat, read in one trip: each key's value or its default."""

        def read() -> dict[str, Any]:
            return {
                key: self.service.chats.setting(platform, chat_id, key, default)
                for key, default in defaults.items()
            }

        return await off_loop(read)

    async def set_chat_settings(self, platform: str, chat_id: str, values: dict[str, Any]) -> None:
        """Store the settings ``values`` of one chat, in one trip."""

        def write() -> None:
            for key, value in values.items():
                self.service.chats.set_setting(platform, chat_id, key, value)

        await off_loop(write)

    async def vote(self, row: CheckRow, platform: str, user_id: str, vote: int) -> tuple[int, int]:
        """Record a vote; ``(up, down)`` for the verdict, this vote included."""
        return await off_loop(self.service.chats.vote, row, platform, user_id, vote)

    async def check_in_chat(self, check_id: str, platform: str, chat_id: str) -> CheckRow | None:
        """The check, if it was asked in this chat of this platform."""
        return await off_loop(self.service.chats.check_in_chat, check_id, platform, chat_id)

    async def stored_check(
        self, check_id: str, platform: str, chat_id: str
    ) -> tuple[CheckRow, Report] | None:
        """The check and the report it shows, if it was asked in this chat, in one trip."""

        def read() -> tuple[CheckRow, Report] | None:
            if self.service.chats.check_in_chat(check_id, platform, chat_id) is None:
                return None
            return self.service.store.report_for(check_id)

        return await off_loop(read)

    async def report_for(self, check_id: str) -> tuple[CheckRow, Report] | None:
        return await off_loop(self.service.store.report_for, check_id)

    async def section_mark(self, check_id: str, kind: str) -> Any:
        return await off_loop(self.service.store.marks.get, check_id, kind)

    async def claim_section(self, check_id: str, kind: str, value: Any) -> bool:
        """Whether this caller, of every bot process on the store, posts the section
        (:meth:`storage.chat_records.SectionMarks.claim`)."""
        return await off_loop(self.service.store.marks.claim, check_id, kind, value)

    async def set_section_mark(self, check_id: str, kind: str, value: Any) -> None:
        await off_loop(self.service.store.marks.set, check_id, kind, value)
