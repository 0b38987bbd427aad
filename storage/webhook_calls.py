"""``store.webhook_calls``: the calls the service owes the HTTP API's webhooks, each kept
until delivered or given up (:mod:`bots.api.webhooks` makes and sends them).

A ``done`` call is owed once a check asked with a key that has a webhook ends; a
``corrected`` call once per correction of its verdict. Each is tried until its
webhook answers with a 2xx, the next attempt due at ``next_at``, and given up a day
(the sender's setting) after it was made; every attempt is counted, so that
``GET /v1/checks/<id>`` shows what was delivered.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass

from .locked import StorePart
from .rows import from_iso, to_iso

__all__ = ["WebhookCall", "WebhookCalls"]


@dataclass(frozen=True, slots=True)
class WebhookCall:
    """One call owed to a key's webhook, and how it stands."""

    id: str
    check_id: str
    key_name: str
    event: str
    verdict: str
    status: str
    attempts: int
    next_at: dt.datetime
    last_error: str
    created_at: dt.datetime
    delivered_at: dt.datetime | None


_COLUMNS = (
    "id, check_id, key_name, event, verdict, status, attempts, next_at, last_error,"
    " created_at, delivered_at"
)


def _call(row: tuple[object, ...]) -> WebhookCall:
    (call_id, check_id, key, event, verdict, status, attempts, next_at, error, made, done) = row
    return WebhookCall(
        str(call_id),
        str(check_id),
        str(key),
        str(event),
        str(verdict),
        str(status),
        int(str(attempts)),
        dt.datetime.fromisoformat(str(next_at)),
        str(error),
        dt.datetime.fromisoformat(str(made)),
        from_iso(done if done is None else str(done)),
    )


class WebhookCalls(StorePart):
    """The ``webhook_calls`` table of a store."""

    def owe(self, check_id: str, key_name: str, event: str, verdict: str) -> str:
        """Owe ``key_name``'s webhook a call about ``check_id``, due now; its id."""
        call_id = secrets.token_urlsafe(12)
        now = self.db.now()
        row = {"id": call_id, "check_id": check_id, "key_name": key_name, "event": event}
        row |= {"verdict": verdict, "next_at": now, "created_at": now}
        with self.db.write():
            self.db.table("webhook_calls").insert(row)
        return call_id

    def ended_without_call(self, key_name: str, chat: str, since: str, limit: int) -> list[str]:
        """Checks asked in the key's ``chat`` (keyed) that ended after ``since`` (its
        webhook's registration) and are owed no ``done`` call yet, oldest first."""
        rows = self.db.rows(
            "SELECT c.id FROM checks c WHERE c.platform = 'api' AND c.chat = ?"
            " AND c.status IN ('done', 'failed', 'cancelled') AND c.finished_at >= ?"
            " AND NOT EXISTS (SELECT 1 FROM webhook_calls w WHERE w.check_id = c.id"
            " AND w.key_name = ? AND w.event = 'done') ORDER BY c.finished_at LIMIT ?",
            [chat, since, key_name, limit],
        )
        return [str(row[0]) for row in rows]

    def due(self, limit: int) -> list[WebhookCall]:
        """The pending calls whose next attempt is due, the longest due first."""
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM webhook_calls WHERE status = 'pending' AND next_at <= ?"
            " ORDER BY next_at LIMIT ?",
            [self.db.now(), limit],
        )
        return [_call(row) for row in rows]

    def delivered(self, call_id: str) -> None:
        now = self.db.now()
        with self.db.write():
            self.db.execute(
                "UPDATE webhook_calls SET status = 'delivered', attempts = attempts + 1,"
                " delivered_at = ?, last_error = '' WHERE id = ?",
                [now, call_id],
            )

    def failed(self, call_id: str, error: str, retry_at: dt.datetime | None) -> None:
        """One more attempt failed (``error``, a few words); the next is due at
        ``retry_at``, or (``None``) the call is given up."""
        status, next_at = (
            ("given_up", self.db.now())
            if retry_at is None
            else (
                "pending",
                to_iso(retry_at),
            )
        )
        with self.db.write():
            self.db.execute(
                "UPDATE webhook_calls SET status = ?, attempts = attempts + 1, next_at = ?,"
                " last_error = ? WHERE id = ?",
                [status, next_at, error[:200], call_id],
            )

    def of_check(self, check_id: str) -> list[WebhookCall]:
        """Every call owed about ``check_id``, oldest first."""
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM webhook_calls WHERE check_id = ? ORDER BY created_at, id",
            [check_id],
        )
        return [_call(row) for row in rows]
