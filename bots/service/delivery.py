"""The mode of a deployment, as a collaborator of the check service: how a check is run
and how its card reaches its chat.

The composition root chooses one :class:`CardDelivery` and the service builds it from
its parts (:class:`Parts`): :class:`~bots.service.local.LocalDelivery` runs the engine in
this process, and the bot that asked posts the card;
:class:`~bots.service.queue.delivery.QueuedDelivery` (on PostgreSQL) queues each check for
the worker processes, follows its run through the events they publish, and leaves the
card to a ``deliver`` job that any bot replica may run (the handles it returns say so:
:attr:`~bots.service.handles.CheckHandle.delivered_elsewhere`). The service itself asks
no mode: it hands each request it decided to check to ``delivery.submit``.

It also holds :class:`StoreThreads`, the service's own threads for the store's calls.
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime as dt
import functools
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, ParamSpec, Protocol, TypeVar

from storage.rows import CheckRow
from storage.store import CheckStore
from zofia_engine.ports import Checker
from zofia_engine.post import ReadPost

from .fair_slots import FairSlots
from .handles import CheckHandle, Waiters
from .limits import RequestLimits
from .naming import ChatNamer
from .records import Admission, CardState, Claim, SendCorrection
from .repeats import NearRepeats
from .settings import ServiceSettings

__all__ = [
    "STORE_THREADS",
    "CardDelivery",
    "DeliveryFactory",
    "Intake",
    "Parts",
    "PostCard",
    "Probes",
    "StoreThreads",
]

P = ParamSpec("P")
T = TypeVar("T")

#: how many store calls of one service may wait at once; more queue for a thread
STORE_THREADS = 8

#: what a bot does with a claimed delivery: post the card's state (or its failure)
PostCard = Callable[[Claim, CardState], Awaitable[None]]
#: what a health probe asks of a delivery: each named check, true when it holds
Probes = dict[str, Callable[[], Awaitable[bool]]]


class StoreThreads:
    """The service's own threads for the store's calls. Every store call is synchronous
    and may wait: for the store's lock while another thread writes, for PostgreSQL's
    write lock, or for a lost connection to come back; on the event loop such a wait
    would stop every chat at once, and on the default executor it would take the threads
    the engine's work uses as well.

    Args:
        size: how many calls may wait at once.
    """

    def __init__(self, size: int = STORE_THREADS) -> None:
        self._pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="zofia-store")

    async def run(self, call: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """``call(*args, **kwargs)`` on a store thread (with this task's context
        variables), awaited. The call starts at once: a caller cancelled meanwhile stops
        waiting for it, not the call."""
        context = contextvars.copy_context()
        work = functools.partial(context.run, call, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._pool, work)

    def close(self) -> None:
        """Wait for the calls under way, then let the threads go."""
        self._pool.shutdown(wait=True)


@dataclass(frozen=True)
class Parts:
    """What a delivery works with, of the service's parts."""

    store: CheckStore
    settings: ServiceSettings
    checker: Checker
    repeats: NearRepeats
    waiters: Waiters
    limits: RequestLimits
    slots: FairSlots
    threads: StoreThreads
    namer: ChatNamer
    window: dt.timedelta  # how far back a repeat is answered from the store


@dataclass(frozen=True)
class Intake:
    """A request the service decided to check, as it hands it to its delivery.

    Args:
        read: the post, read once.
        digest: its text key (its keyed text, reply language and pictures).
        admission: who asked where, as the limits let them in.
        recheck: run the engine even when a fresh answer is stored.
        now: when it was taken.
        record: writes the request's row (its keyword arguments are the row's own).
    """

    read: ReadPost
    digest: str
    admission: Admission
    recheck: bool
    now: dt.datetime
    record: Callable[..., CheckRow]


class CardDelivery(Protocol):
    """How checks are run and their cards delivered: in this process, or on workers."""

    async def start(self, *, resume: bool) -> list[str]:
        """Get ready; the ids of the checks a crash left unfinished that this process
        took up (``resume``: it may)."""

    async def aclose(self) -> None:
        """Stop: the runs of this process go back to the queue, or checks go on
        elsewhere and their cards are delivered."""

    def pending(self) -> int:
        """How many checks wait for or hold an engine run (the deployment's bound)."""

    def forget_stale(self, now: dt.datetime) -> None:
        """Blank what is kept of deliveries long overdue (blocking)."""

    def queue_due(self, due: dict[str, list[str]]) -> None:
        """Queue the corrections of the cards a change made due, in the caller's write
        transaction (:data:`~bots.service.records.QueueDue`)."""

    async def submit(self, intake: Intake) -> CheckHandle:
        """Answer ``intake`` from the store, join the run of its text, or start a run;
        the requester's handle.

        Raises:
            RateLimitedError: the deployment or a share of it is full.
        """

    async def expect(self, check_id: str, platform: str, target: dict[str, Any]) -> None:
        """Have ``check_id``'s card posted at ``target`` (the platform's ids), when its
        handle says it is delivered elsewhere."""

    def serving(
        self, platform: str, post_card: PostCard, send: SendCorrection | None
    ) -> AbstractAsyncContextManager[Probes]:
        """Deliver ``platform``'s cards (``post_card``) and corrections (``send``) while
        the block runs; what a health probe may ask meanwhile."""


#: builds the chosen delivery from the service's parts
DeliveryFactory = Callable[[Parts], CardDelivery]
