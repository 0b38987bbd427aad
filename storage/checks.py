"""``store.checks``: the ``checks`` table, one row per request to check a post.

A row is written the moment a post is submitted and moves through ``queued``,
``running`` and an end (``done``, ``failed``, ``cancelled``); repeats point at the
check they repeat. Rate limits count these rows, and a restart resumes from them.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from zofia_engine.post import Post

from .errors import CheckNotFoundError
from .keys import new_check_id, storable_text
from .locked import StorePart
from .other_chats import MAY_ANSWER
from .request_counts import RequestScope, count_since, oldest_since
from .rows import (
    CHECK_STATUSES,
    REPEAT_KINDS,
    CheckRow,
    CheckStatus,
    RepeatKind,
    to_iso,
)

__all__ = ["ANSWERABLE", "TERMINAL", "Checks"]

TERMINAL = ("done", "failed", "cancelled")

# Done originals whose report is still whole: what repeats may be answered from.
ANSWERABLE = (
    "c.status = 'done' AND c.repeat_of IS NULL AND EXISTS "
    "(SELECT 1 FROM reports r WHERE r.check_id = c.id AND r.report_json IS NOT NULL)"
)


class Checks(StorePart):
    """The checks of a store."""

    def create(
        self,
        *,
        platform: str,
        chat: str,
        requester: str,
        post: Post,
        text_hash: str,
        status: CheckStatus = "queued",
        repeat_of: str | None = None,
        repeat_kind: RepeatKind | None = None,
        forced: bool = False,
        tokens: int | None = None,
        in_group: bool = False,
    ) -> CheckRow:
        """Record a new request to check ``post``.

        Args:
            platform: where it came from (``telegram``, ``discord``, ``cli``).
            chat: :func:`~storage.keys.hash_chat` of the chat; never the raw id.
            requester: :func:`~storage.keys.hash_user` of the user; never the raw id.
            post: the post.
            text_hash: :func:`~storage.keys.keyed_text_hash` of the post's text (and of its
                reply language, when not English: see ``CheckService``).
            status: the starting status; a repeat answered at once starts ``done``.
            repeat_of: the original check this one repeats, if any.
            repeat_kind: ``exact`` or ``near``; given exactly when ``repeat_of`` is.
            forced: the user asked for a fresh check despite a repeat.
            tokens: what an engine run reserves of the day's token budget until its
                report replaces it with the real count (``None``: no charge, a repeat).
            in_group: asked in a group or a channel (:mod:`storage.other_chats`).

        Returns:
            The new row, with a fresh unguessable id.

        Raises:
            ValueError: an unknown status or repeat kind, or only one of the repeat fields.
            CheckNotFoundError: ``repeat_of`` names no check.
        """
        _check_kinds(status, repeat_of, repeat_kind)
        row: dict[str, Any] = {
            "id": new_check_id(),
            "platform": storable_text(platform),
            "chat": storable_text(chat),
            "requester": storable_text(requester),
            **_status_columns(status, self.db.now()),
            **_post_columns(post),
            "text_hash": text_hash,
            "repeat_of": repeat_of,
            "repeat_kind": repeat_kind,
            "forced": int(forced),
        }
        if tokens is not None:
            row["tokens"] = tokens
        row.update({"in_group": 1} if in_group else {})  # else the default, as before m018
        with self.db.write():
            if repeat_of is not None:
                self.db.require_check(repeat_of)
            self.db.table("checks").insert(row)
        return CheckRow.from_row(row)

    def copy_of(self, original: CheckRow, *, platform: str, chat: str, requester: str) -> CheckRow:
        """A card of check ``original`` (not a repeat) made for ``chat`` (keyed) on
        ``platform``, opened by ``requester`` (keyed): a ``done`` exact repeat of it,
        holding nothing of its post (no text, link, origin, date or text key) and dated as
        the original, so that the purge takes it with the original however often, and
        however late, a shared card is opened.

        Raises:
            CheckNotFoundError: ``original`` is not stored.
        """
        row: dict[str, Any] = {
            "id": new_check_id(),
            "platform": storable_text(platform),
            "chat": storable_text(chat),
            "requester": storable_text(requester),
            **_status_columns("done", to_iso(original.created_at)),
            **_post_columns(Post(text="", language=original.language)),
            "text_hash": "",
            "repeat_of": original.id,
            "repeat_kind": "exact",
            "forced": 0,
        }
        with self.db.write():
            self.db.require_check(original.id)
            self.db.table("checks").insert(row)
        return CheckRow.from_row(row)

    def set_status(self, check_id: str, status: CheckStatus, *, error: str = "") -> None:
        """Move a check to ``status``: ``running`` stamps ``started_at``, an end ``finished_at``.

        Args:
            check_id: the check.
            status: the new status.
            error: why it failed, for ``failed``; replaces the stored error.

        Raises:
            ValueError: an unknown status.
            CheckNotFoundError: no such check.
        """
        if status not in CHECK_STATUSES:
            raise ValueError(f"unknown status {status!r}")
        stamp = {"running": ", started_at = :now"}.get(status, "")
        if status in TERMINAL:
            stamp = ", finished_at = :now"
        params = {
            "id": check_id,
            "status": status,
            "error": storable_text(error),
            "now": self.db.now(),
        }
        cursor = self.db.execute(  # under the store's lock, as every execute
            f"UPDATE checks SET status = :status, error = :error{stamp} WHERE id = :id", params
        )
        if cursor.rowcount == 0:
            raise CheckNotFoundError(f"no check {check_id!r}")

    def get(self, check_id: str) -> CheckRow | None:
        """The check with this id, or ``None`` if there is no such check."""
        found = self._rows("SELECT * FROM checks WHERE id = ?", [check_id])
        return found[0] if found else None

    def unfinished(self) -> list[CheckRow]:
        """Checks still ``queued`` or ``running`` (after a restart, those to resume), oldest
        first."""
        return self._rows(
            "SELECT * FROM checks WHERE status IN ('queued', 'running') ORDER BY created_at, rowid"
        )

    def find_exact(
        self, text_hash: str, since: dt.datetime, *, platform: str, chat: str
    ) -> CheckRow | None:
        """The newest original ``done`` check of this text since ``since``, report intact,
        that may answer ``chat`` on ``platform`` (:mod:`storage.other_chats`).

        Args:
            text_hash: :func:`~storage.keys.keyed_text_hash` of the post.
            since: the start of the repeat window (timezone-aware).
            platform, chat: where the repeat is asked (the chat keyed).

        Returns:
            The check to answer the repeat from, or ``None``.

        Raises:
            ValueError: ``since`` is naive.
        """
        found = self._rows(
            "SELECT c.* FROM checks c WHERE c.text_hash = :text_hash AND c.created_at >= :since"
            f" AND {ANSWERABLE} AND {MAY_ANSWER} ORDER BY c.created_at DESC, c.rowid DESC LIMIT 1",
            {"text_hash": text_hash, "since": to_iso(since), "platform": platform, "chat": chat},
        )
        return found[0] if found else None

    def in_flight(self, text_hash: str, *, platform: str, chat: str) -> CheckRow | None:
        """The original check of this text key still queued or running, if any, that may
        answer ``chat`` on ``platform`` (:mod:`storage.other_chats`)."""
        found = self._rows(
            "SELECT * FROM checks c WHERE c.text_hash = :text_hash AND c.repeat_of IS NULL"
            f" AND c.status IN ('queued', 'running') AND {MAY_ANSWER}"
            " ORDER BY c.created_at DESC, c.rowid DESC LIMIT 1",
            {"text_hash": text_hash, "platform": platform, "chat": chat},
        )
        return found[0] if found else None

    def joiners(self, check_id: str) -> list[tuple[str, str]]:
        """``(id, status)`` of the checks that joined ``check_id``'s run (exact repeats)."""
        rows = self.db.rows(
            "SELECT id, status FROM checks WHERE repeat_of = ? AND repeat_kind = 'exact'",
            [check_id],
        )
        return [(row[0], row[1]) for row in rows]

    def history(
        self, *, limit: int = 20, platform: str | None = None, chat: str | None = None
    ) -> list[tuple[CheckRow, str | None]]:
        """Recent checks, newest first, each with its verdict (``None`` without a report).

        Args:
            limit: at most this many.
            platform: only this platform's checks.
            chat: only this chat's checks.

        Returns:
            ``(check, verdict)`` pairs.
        """
        where, params = RequestScope(platform=platform, chat=chat).where()
        sql = (
            "SELECT c.*, r.verdict AS _verdict FROM checks c"
            " LEFT JOIN reports r ON r.check_id = c.id"
            f" WHERE {where} ORDER BY c.created_at DESC, c.rowid DESC LIMIT :limit"
        )
        rows = self.db.dicts(sql, {**params, "limit": limit})
        return [(CheckRow.from_row(row), row["_verdict"]) for row in rows]

    def recent_seconds(self, limit: int = 20) -> list[float]:
        """How long the latest ``limit`` finished engine runs took, newest first."""
        rows = self.db.rows(
            "SELECT started_at, finished_at FROM checks WHERE status = 'done'"
            " AND repeat_of IS NULL AND started_at IS NOT NULL"
            " ORDER BY finished_at DESC LIMIT ?",
            [limit],
        )
        return [
            (dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(start)).total_seconds()
            for start, end in rows
        ]

    def pending_of(self, *, requester: str, platform: str, chat: str) -> tuple[int, int]:
        """How many engine runs (not repeats) are queued or running of this requester, and
        of this chat, in one query over the pending checks (few: the deployment bounds
        them), not over the requester's or the chat's whole history."""
        (mine, chat_s) = self.db.one(
            "SELECT count(CASE WHEN c.requester = :requester THEN 1 END),"
            " count(CASE WHEN c.platform = :platform AND c.chat = :chat THEN 1 END)"
            " FROM checks c WHERE c.status IN ('queued', 'running') AND c.repeat_of IS NULL",
            {"requester": requester, "platform": platform, "chat": chat},
        )
        return int(mine), int(chat_s)

    def tokens_since(
        self,
        since: dt.datetime,
        *,
        requester: str | None = None,
        platform: str | None = None,
        chat: str | None = None,
    ) -> int:
        """The day's token budget spent by the checks requested since ``since`` (of this
        requester or chat when given): each finished check's real count, and what a
        check running, queued or failed reserved."""
        where, params = RequestScope(since, requester, platform, chat).where()
        sql = f"SELECT coalesce(sum(c.tokens), 0) FROM checks c WHERE {where}"
        (tokens,) = self.db.one(sql, params)
        return int(tokens)

    def day_charges(
        self, since: dt.datetime, *, requester: str, platform: str, chat: str
    ) -> tuple[int, int, int]:
        """:meth:`tokens_since` ``since`` of everyone, of this requester and of this chat,
        follow-up questions' charges included (``attempts.tokens``), in one pass over the
        checks and one over the requests asked since then (the indexes on
        ``created_at``)."""
        sums = (
            "coalesce(sum({t}.tokens), 0),"
            " coalesce(sum(CASE WHEN {t}.requester = :requester THEN {t}.tokens END), 0),"
            " coalesce(sum(CASE WHEN {t}.platform = :platform AND {t}.chat = :chat"
            " THEN {t}.tokens END), 0)"
        )
        params = {"since": to_iso(since), "requester": requester, "platform": platform}
        params["chat"] = chat
        checks = self.db.one(
            f"SELECT {sums.format(t='c')} FROM checks c WHERE c.created_at >= :since", params
        )
        asked = self.db.one(
            f"SELECT {sums.format(t='a')} FROM attempts a"
            " WHERE a.created_at >= :since AND a.tokens IS NOT NULL",
            params,
        )
        everyone, mine, chat_s = (int(c) + int(a) for c, a in zip(checks, asked, strict=True))
        return everyone, mine, chat_s

    def count(self, scope: RequestScope, *, up_to: int | None = None) -> int:
        """How many checks (any status, repeats included) ``scope`` holds.

        Args:
            scope: whose requests, where, and since when.
            up_to: stop counting here (a limit only needs to know "at least N"),
                which keeps the query short in a busy chat.

        Returns:
            The count; rate limits and quotas compare it with their caps.

        Raises:
            ValueError: the scope's ``since`` is naive.
        """
        return count_since(self.db, "checks", scope, up_to=up_to)

    def oldest(self, scope: RequestScope) -> dt.datetime | None:
        """When the oldest of the requests :meth:`count` counts was made (a limit of N per
        window frees up a slot at ``oldest + window``), or ``None`` if there is none.

        Raises:
            ValueError: the scope's ``since`` is naive.
        """
        return oldest_since(self.db, "checks", scope)

    def _rows(self, sql: str, params: list[Any] | dict[str, Any] | None = None) -> list[CheckRow]:
        return [CheckRow.from_row(row) for row in self.db.dicts(sql, params)]


def _check_kinds(status: str, repeat_of: str | None, repeat_kind: str | None) -> None:
    if status not in CHECK_STATUSES:
        raise ValueError(f"unknown status {status!r}")
    if (repeat_of is None) != (repeat_kind is None):
        raise ValueError("repeat_of and repeat_kind are given together or not at all")
    if repeat_kind is not None and repeat_kind not in REPEAT_KINDS:
        raise ValueError(f"unknown repeat kind {repeat_kind!r}")


def _status_columns(status: CheckStatus, now: str) -> dict[str, Any]:
    """The columns of a new check's status: created ``now``, and started or finished
    ``now`` too when it starts ``running`` or at an end (a repeat answered at once)."""
    return {
        "status": status,
        "created_at": now,
        "started_at": now if status == "running" else None,
        "finished_at": now if status in TERMINAL else None,
        "error": "",
    }


def _post_columns(post: Post) -> dict[str, Any]:
    """The columns a check takes from its post; ``language`` only when not English (the
    column's default, '')."""
    columns: dict[str, Any] = {
        "post_text": storable_text(post.text),
        "url": storable_text(post.url),
        "origin": storable_text(post.origin),
        "published": None if post.published is None else post.published.isoformat(),
    }
    if post.language:
        columns["language"] = storable_text(post.language)
    return columns
