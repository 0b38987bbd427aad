"""Progress and completion of checks, from the worker that runs them to whoever waits.

A worker publishes with ``pg_notify`` (in its transaction: completion is announced
when it commits, never before); every bot process listens on one channel and hands
each event to the service, which passes it to the requesters waiting in that process.
A notification missed while the connection was down is not lost for good: after a
reconnect the service asks the store for the state of everything it waits on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import psycopg

from storage.postgres import PostgresDatabase

__all__ = ["CHANNEL", "CheckEvent", "Listener", "payload", "publish"]

log = logging.getLogger(__name__)

CHANNEL = "zofia_checks"
EventKind = Literal["progress", "done", "failed"]


@dataclass(frozen=True)
class CheckEvent:
    """One notification: ``progress`` (``event`` is a progress event as a dict), ``done``
    or ``failed`` (``event`` is empty: the outcome is read from the store)."""

    check_id: str
    kind: EventKind
    event: dict[str, Any]

    @classmethod
    def parse(cls, payload: str) -> CheckEvent | None:
        try:
            data = json.loads(payload)
            return cls(str(data["check"]), data["kind"], dict(data.get("event") or {}))
        except (ValueError, KeyError, TypeError):
            return None


#: the longest text a progress step carries in a notification (a judge's call, a stage)
MAX_FIELD = 120
_PROGRESS_FIELDS = ("kind", "stage", "detail", "round", "elapsed_ms")


def payload(check_id: str, kind: EventKind, event: dict[str, Any] | None = None) -> str:
    """A notification's text: the check's id and the event's kind; for ``progress``, the
    step's few fields, each text cut to :data:`MAX_FIELD`. What a check ended with (its
    report, why it failed) is never sent: the listener reads it from the store. So a
    payload stays far under PostgreSQL's 8,000-byte limit, whatever a check does."""
    body: dict[str, Any] = {"check": check_id, "kind": kind}
    if kind == "progress" and event:
        body["event"] = {
            name: value[:MAX_FIELD] if isinstance(value, str) else value
            for name, value in event.items()
            if name in _PROGRESS_FIELDS
        }
    return json.dumps(body, ensure_ascii=False)


def publish(
    db: PostgresDatabase, check_id: str, kind: EventKind, event: dict[str, Any] | None = None
) -> None:
    """Announce an event of ``check_id`` (on commit, when inside a transaction)."""
    db.execute("SELECT pg_notify(?, ?)", [CHANNEL, payload(check_id, kind, event)])


class Listener:
    """Listens on :data:`CHANNEL` until cancelled, reconnecting with a growing pause.

    Args:
        url: the PostgreSQL URL.
        on_event: called with each event.
        on_connect: called after every (re)connection, once listening: the moment to
            catch up on what was missed.
    """

    def __init__(
        self,
        url: str,
        on_event: Callable[[CheckEvent], None],
        on_connect: Callable[[], Awaitable[None]],
    ) -> None:
        self.url = url
        self.on_event = on_event
        self.on_connect = on_connect
        self.connected = asyncio.Event()

    async def run(self) -> None:
        pause = 0.2
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self.url, autocommit=True, connect_timeout=5
                ) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    self.connected.set()
                    pause = 0.2
                    await self.on_connect()
                    await self._receive(conn)
            except psycopg.OperationalError as exc:
                log.warning("event listener lost its connection (%s); retrying", exc)
            except Exception:  # a bad notification or a bug: logged, and listening goes on
                log.exception("event listener failed; retrying")
            finally:
                self.connected.clear()
            await asyncio.sleep(pause)
            pause = min(pause * 2, 5.0)

    async def _receive(self, conn: psycopg.AsyncConnection[Any]) -> None:
        while True:
            # A bounded wait, then a ping: a dead server is noticed within seconds.
            async for notify in conn.notifies(timeout=5.0):
                event = CheckEvent.parse(notify.payload)
                if event is not None:
                    self.on_event(event)
            await conn.execute("SELECT 1")
