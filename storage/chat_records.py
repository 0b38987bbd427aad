"""Per-user and per-chat records: feedback votes, chat settings, request counts.

:class:`ChatRecords` also holds what every part of the store shares: the
database, the lock and the clock. :class:`~storage.store.CheckStore` builds on it.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Callable
from typing import Any

from .errors import CheckNotFoundError
from .keys import clean_text
from .postgres import StoreDatabase
from .rows import CheckRow, from_iso, to_iso
from .transaction import write_transaction

__all__ = ["ChatRecords", "filters"]


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class ChatRecords:
    """Feedback, chat settings and request counts over an open database.

    Args:
        db: a database from :func:`~storage.database.open_database`.
        clock: returns the current timezone-aware time; tests pass a fake one.
    """

    def __init__(
        self, db: StoreDatabase, *, clock: Callable[[], dt.datetime] | None = None
    ) -> None:
        self.db = db
        self._clock = clock or _utc_now
        self._lock = threading.RLock()

    @property
    def clock(self) -> Callable[[], dt.datetime]:
        """The time source every stored time comes from."""
        return self._clock

    def _now(self) -> str:
        return to_iso(self._clock())

    def _require_check(self, check_id: str) -> None:
        if self.db.execute("SELECT 1 FROM checks WHERE id = ?", [check_id]).fetchone() is None:
            raise CheckNotFoundError(f"no check {check_id!r}")

    def _checks(self, sql: str, params: list[Any] | dict[str, Any] | None = None) -> list[CheckRow]:
        with self._lock:
            rows = list(self.db.query(sql, params))
        return [CheckRow.from_row(row) for row in rows]

    # -- feedback and settings --------------------------------------------------------------

    def add_feedback(self, check_id: str, user_hash: str, vote: int, comment: str = "") -> None:
        """Record a user's vote on a check's verdict; a second vote replaces the first.

        Args:
            check_id: the check.
            user_hash: :func:`~storage.keys.hash_user` of the voter.
            vote: ``1`` (right) or ``-1`` (wrong).
            comment: optional free text.

        Raises:
            ValueError: ``vote`` is not 1 or -1.
            CheckNotFoundError: no such check.
        """
        if vote not in (1, -1) or isinstance(vote, bool):
            raise ValueError(f"vote must be 1 or -1, not {vote!r}")
        row = {
            "check_id": check_id,
            "user_hash": clean_text(user_hash),
            "vote": vote,
            "comment": clean_text(comment),
            "created_at": self._now(),
        }
        with self._lock, write_transaction(self.db):
            self._require_check(check_id)
            self.db.table("feedback").upsert(row, pk=("check_id", "user_hash"))

    def feedback_counts(self, check_id: str) -> tuple[int, int]:
        """The votes on a check.

        Args:
            check_id: the check's id.

        Returns:
            ``(up, down)``: how many voted 1 and how many -1.
        """
        with self._lock:
            up, down = self.db.execute(
                "SELECT count(*) FILTER (WHERE vote = 1), count(*) FILTER (WHERE vote = -1)"
                " FROM feedback WHERE check_id = ?",
                [check_id],
            ).fetchone()
        return int(up), int(down)

    def get_chat_setting(self, platform: str, chat: str, key: str, default: Any = None) -> Any:
        """A chat's setting.

        Args:
            platform: the chat's platform.
            chat: the chat's id.
            key: the setting's name.
            default: what to return when it is unset.

        Returns:
            The value, decoded from JSON, or ``default``.
        """
        with self._lock:
            row = self.db.execute(
                "SELECT value_json FROM chat_settings WHERE platform = ? AND chat = ? AND key = ?",
                [platform, chat, key],
            ).fetchone()
        return default if row is None else json.loads(row[0])

    def set_chat_setting(self, platform: str, chat: str, key: str, value: Any) -> None:
        """Set a chat's setting to a JSON value (replacing any earlier one).

        Args:
            platform: the chat's platform.
            chat: the chat's id.
            key: the setting's name.
            value: anything ``json.dumps`` takes.

        Raises:
            TypeError: ``value`` is not JSON-serialisable.
            ValueError: ``value`` holds NaN or infinity.
        """
        value_json = clean_text(json.dumps(value, ensure_ascii=False, allow_nan=False))
        row = {
            "platform": clean_text(platform),
            "chat": clean_text(chat),
            "key": clean_text(key),
            "value_json": value_json,
            "updated_at": self._now(),
        }
        with self._lock, write_transaction(self.db):
            self.db.table("chat_settings").upsert(row, pk=("platform", "chat", "key"))

    def section_mark(self, check_id: str, kind: str) -> Any:
        """What a bot recorded when it posted a section of a check (message ids, a thread
        id), or ``None`` when it has not posted it."""
        with self._lock:
            row = self.db.execute(
                "SELECT value_json FROM section_marks WHERE check_id = ? AND kind = ?",
                [check_id, kind],
            ).fetchone()
        return None if row is None else json.loads(row[0])

    def set_section_mark(self, check_id: str, kind: str, value: Any) -> None:
        """Record that a section of a check was posted (``value``: where); ``None`` clears
        the mark, so that a later press posts the section again.

        Raises:
            CheckNotFoundError: no such check.
        """
        with self._lock, write_transaction(self.db):
            if value is None:
                self.db.execute(
                    "DELETE FROM section_marks WHERE check_id = ? AND kind = ?", [check_id, kind]
                )
                return
            self._require_check(check_id)
            row = {
                "check_id": check_id,
                "kind": clean_text(kind),
                "value_json": json.dumps(value, allow_nan=False),
                "updated_at": self._now(),
            }
            self.db.table("section_marks").upsert(row, pk=("check_id", "kind"))

    def tokens_since(self, since: dt.datetime) -> int:
        """LLM tokens (prompt and completion) of the reports stored since ``since``."""
        with self._lock:
            row = self.db.execute(
                "SELECT coalesce(sum(prompt_tokens + completion_tokens), 0) FROM reports"
                " WHERE created_at >= ?",
                [to_iso(since)],
            ).fetchone()
        return int(row[0])

    def recent_check_seconds(self, limit: int = 20) -> list[float]:
        """How long the latest ``limit`` finished engine runs took, newest first."""
        with self._lock:
            rows = self.db.execute(
                "SELECT started_at, finished_at FROM checks WHERE status = 'done'"
                " AND repeat_of IS NULL AND started_at IS NOT NULL"
                " ORDER BY finished_at DESC LIMIT ?",
                [limit],
            ).fetchall()
        return [
            (dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(start)).total_seconds()
            for start, end in rows
        ]

    def count_requests(
        self,
        *,
        since: dt.datetime,
        requester: str | None = None,
        platform: str | None = None,
        chat: str | None = None,
        up_to: int | None = None,
    ) -> int:
        """How many checks (any status, repeats included) were requested since ``since``.

        Args:
            since: the start of the window (timezone-aware).
            requester: only this user's (the :func:`~storage.keys.hash_user` hash).
            platform: only this platform's.
            chat: only this chat's.
            up_to: stop counting here (a limit only needs to know "at least N"),
                which keeps the query short in a busy chat.

        Returns:
            The count; rate limits and quotas compare it with their caps.

        Raises:
            ValueError: ``since`` is naive.
        """
        where, params = filters(since=since, requester=requester, platform=platform, chat=chat)
        sql = f"SELECT count(*) FROM checks c WHERE {where}"
        if up_to is not None:
            sql = (
                "SELECT count(*) FROM"
                f" (SELECT 1 FROM checks c WHERE {where} LIMIT :up_to) AS recent"
            )
            params = {**params, "up_to": up_to}
        with self._lock:
            row = self.db.execute(sql, params).fetchone()
        return int(row[0])

    def oldest_request(
        self,
        *,
        since: dt.datetime,
        requester: str | None = None,
        platform: str | None = None,
        chat: str | None = None,
    ) -> dt.datetime | None:
        """When the oldest of the requests :meth:`count_requests` counts was made.

        A limit of N per window frees up a slot at ``oldest + window``.

        Args:
            since: the start of the window (timezone-aware).
            requester: only this user's.
            platform: only this platform's.
            chat: only this chat's.

        Returns:
            The time of the oldest such request, or ``None`` if there is none.

        Raises:
            ValueError: ``since`` is naive.
        """
        where, params = filters(since=since, requester=requester, platform=platform, chat=chat)
        with self._lock:
            row = self.db.execute(
                f"SELECT min(created_at) FROM checks c WHERE {where}", params
            ).fetchone()
        return from_iso(row[0])


def filters(
    *,
    since: dt.datetime | None = None,
    requester: str | None = None,
    platform: str | None = None,
    chat: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """A ``WHERE`` clause over ``checks c`` and its parameters; ``1 = 1`` when nothing filters."""
    values = {"requester": requester, "platform": platform, "chat": chat}
    params: dict[str, Any] = {name: value for name, value in values.items() if value is not None}
    clauses = [f"c.{name} = :{name}" for name in params]
    if since is not None:
        params["since"] = to_iso(since)
        clauses.append("c.created_at >= :since")
    return " AND ".join(clauses) or "1 = 1", params
