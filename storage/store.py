"""``CheckStore``: checks and their reports in SQLite.

Every time is timezone-aware UTC, stored as fixed-width ISO 8601 text (so
text order is time order). Every string written goes through
:func:`~storage.keys.clean_text` first, so a post with broken surrogates
is stored (with U+FFFD) instead of crashing the check. Methods hold a lock,
so one store may serve several threads.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from zofia_engine.post import Post
from zofia_engine.report import Report

from .chat_records import filters
from .errors import CheckNotFoundError, StorageError
from .keys import clean_text, new_check_id
from .postgres import consistent, is_postgres
from .retention import purge_content
from .rows import (
    CHECK_STATUSES,
    REPEAT_KINDS,
    CheckRow,
    CheckStatus,
    RepeatKind,
    report_rows,
    serializable_report,
    to_iso,
    vector_blob,
)
from .transaction import write_transaction
from .vectors import ANSWERABLE, PostVectors

__all__ = ["CheckRow", "CheckStatus", "CheckStore", "RepeatKind"]

_TERMINAL = ("done", "failed", "cancelled")
_EXPORT_BATCH = 500


class CheckStore(PostVectors):
    """Checks and everything they produced, over an open database.

    Args:
        db: a database from :func:`~storage.database.open_database`.
        clock: returns the current timezone-aware time; tests pass a fake one.
    """

    # -- checks -----------------------------------------------------------------------------

    def create_check(
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

        Returns:
            The new row, with a fresh unguessable id.

        Raises:
            ValueError: an unknown status or repeat kind, or only one of the repeat fields.
            CheckNotFoundError: ``repeat_of`` names no check.
        """
        if status not in CHECK_STATUSES:
            raise ValueError(f"unknown status {status!r}")
        if (repeat_of is None) != (repeat_kind is None):
            raise ValueError("repeat_of and repeat_kind are given together or not at all")
        if repeat_kind is not None and repeat_kind not in REPEAT_KINDS:
            raise ValueError(f"unknown repeat kind {repeat_kind!r}")
        now = self._now()
        row: dict[str, Any] = {
            "id": new_check_id(),
            "platform": clean_text(platform),
            "chat": clean_text(chat),
            "requester": clean_text(requester),
            "status": status,
            "post_text": clean_text(post.text),
            "text_hash": text_hash,
            "url": clean_text(post.url),
            "origin": clean_text(post.origin),
            "published": None if post.published is None else post.published.isoformat(),
            "created_at": now,
            "started_at": now if status == "running" else None,
            "finished_at": now if status in _TERMINAL else None,
            "error": "",
            "repeat_of": repeat_of,
            "repeat_kind": repeat_kind,
            "forced": int(forced),
        }
        if post.language:  # the column's default, '', is English
            row["language"] = clean_text(post.language)
        with self._lock, write_transaction(self.db):
            if repeat_of is not None:
                self._require_check(repeat_of)
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
        if status in _TERMINAL:
            stamp = ", finished_at = :now"
        params = {"id": check_id, "status": status, "error": clean_text(error), "now": self._now()}
        with self._lock:
            cursor = self.db.execute(
                f"UPDATE checks SET status = :status, error = :error{stamp} WHERE id = :id", params
            )
        if cursor.rowcount == 0:
            raise CheckNotFoundError(f"no check {check_id!r}")

    def get_check(self, check_id: str) -> CheckRow | None:
        """The check with this id.

        Args:
            check_id: the check's id.

        Returns:
            Its row, or ``None`` if there is no such check.
        """
        with self._lock:
            rows = list(self.db.query("SELECT * FROM checks WHERE id = ?", [check_id]))
        return CheckRow.from_row(rows[0]) if rows else None

    def unfinished(self) -> list[CheckRow]:
        """Checks still ``queued`` or ``running``: after a restart, those to resume.

        Returns:
            Their rows, oldest first.
        """
        return self._checks(
            "SELECT * FROM checks WHERE status IN ('queued', 'running') ORDER BY created_at, rowid"
        )

    # -- reports ----------------------------------------------------------------------------

    def save_report(
        self,
        check_id: str,
        report: Report,
        *,
        vector: npt.NDArray[np.float32] | None = None,
    ) -> None:
        """Store a finished check's report and mark the check ``done``, in one transaction.

        Writes the whole report as JSON and its parts as rows (evidence,
        claims, analyses, debate turns and rulings, model calls), and the
        post's vector if given. If anything fails, nothing is written.

        Args:
            check_id: the check.
            report: its report.
            vector: the post's embedding, 1-D float32, for near-repeat search.

        Raises:
            TypeError: ``vector`` is not a float32 array.
            ValueError: ``vector`` is not 1-D, is empty or has NaN or infinite values.
            CheckNotFoundError: no such check.
            StorageError: the check already has a report.
            sqlite3.IntegrityError: the report breaks a constraint (e.g. two evidence
                items with one id).
        """
        blob = None if vector is None else vector_blob(vector)
        report, report_json = serializable_report(report)
        now = self._now()
        rows = report_rows(check_id, report, report_json, now)
        with self._lock, write_transaction(self.db):
            self._require_check(check_id)
            if self.db.execute("SELECT 1 FROM reports WHERE check_id = ?", [check_id]).fetchone():
                raise StorageError(f"check {check_id!r} already has a report")
            for table, table_rows in rows.items():
                if table_rows:
                    self.db.table(table).insert_all(table_rows)
            if blob is not None:
                self.db.table("post_vectors").insert(
                    {"check_id": check_id, "dim": blob[0], "vector": blob[1], "created_at": now}
                )
            self.db.execute(
                "UPDATE checks SET status = 'done', finished_at = ?, error = '' WHERE id = ?",
                [now, check_id],
            )

    def get_report(self, check_id: str) -> Report | None:
        """The check's report, as the engine returned it.

        Args:
            check_id: the check's id.

        Returns:
            The report, or ``None`` if the check has none (yet) or it was purged.
        """
        with self._lock:
            row = self.db.execute(
                "SELECT report_json FROM reports WHERE check_id = ?", [check_id]
            ).fetchone()
        if row is None or row[0] is None:
            return None
        return Report.model_validate_json(row[0])

    def report_for(self, check_id: str) -> tuple[CheckRow, Report] | None:
        """A check and the report it shows: its own, or for a repeat its original's.

        Returns:
            ``None`` when there is no such check, or no report (yet, or purged).
        """
        row = self.get_check(check_id)
        if row is None:
            return None
        report = self.get_report(row.repeat_of or row.id)
        return (row, report) if report is not None else None

    def find_exact(self, text_hash: str, since: dt.datetime) -> CheckRow | None:
        """The newest original ``done`` check of this text since ``since``, report intact.

        Args:
            text_hash: :func:`~storage.keys.keyed_text_hash` of the post.
            since: the start of the repeat window (timezone-aware).

        Returns:
            The check to answer the repeat from, or ``None``.

        Raises:
            ValueError: ``since`` is naive.
        """
        found = self._checks(
            f"SELECT c.* FROM checks c WHERE c.text_hash = ? AND c.created_at >= ?"
            f" AND {ANSWERABLE} ORDER BY c.created_at DESC, c.rowid DESC LIMIT 1",
            [text_hash, to_iso(since)],
        )
        return found[0] if found else None

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
        where, params = filters(platform=platform, chat=chat)
        sql = (
            "SELECT c.*, r.verdict AS _verdict FROM checks c"
            " LEFT JOIN reports r ON r.check_id = c.id"
            f" WHERE {where} ORDER BY c.created_at DESC, c.rowid DESC LIMIT :limit"
        )
        with self._lock:
            rows = list(self.db.query(sql, {**params, "limit": limit}))
        return [(CheckRow.from_row(row), row["_verdict"]) for row in rows]

    def export_reports(self) -> Iterator[dict[str, Any]]:
        """Every ``done`` check with its verdict and report, oldest first, read in batches.

        Yields:
            ``id``, ``platform``, ``chat``, ``requester`` (the user hash),
            ``created_at`` (ISO text), ``repeat_of``, ``repeat_kind``,
            ``verdict``, ``confidence`` and ``report`` (the parsed JSON, or
            ``None`` when purged or when the check is a repeat without its own).
        """
        last_rowid = 0
        while True:
            with self._lock:
                batch = list(
                    self.db.query(
                        "SELECT c.rowid AS _rowid, c.id, c.platform, c.chat, c.requester,"
                        " c.created_at, c.repeat_of, c.repeat_kind, r.verdict, r.confidence,"
                        " r.report_json FROM checks c LEFT JOIN reports r ON r.check_id = c.id"
                        " WHERE c.status = 'done' AND c.rowid > ? ORDER BY c.rowid LIMIT ?",
                        [last_rowid, _EXPORT_BATCH],
                    )
                )
            if not batch:
                return
            last_rowid = batch[-1]["_rowid"]
            for row in batch:
                report_json = row.pop("report_json")
                row.pop("_rowid")
                yield {**row, "report": None if report_json is None else json.loads(report_json)}

    def purge(self, older_than: dt.datetime) -> int:
        """Remove the content of checks created before ``older_than``, keeping the
        record; :mod:`storage.retention` says what goes and what stays.

        Returns:
            How many checks had something to remove.

        Raises:
            ValueError: ``older_than`` is naive.
        """
        with self._lock:
            return purge_content(self.db, older_than)

    def integrity_ok(self) -> bool:
        """Whether ``PRAGMA integrity_check`` says ``ok`` and no foreign key dangles; on
        PostgreSQL, whether amcheck finds every index of the store consistent with its
        table and no report lacks its check (:func:`storage.postgres.consistent`)."""
        if is_postgres(self.db):
            with self._lock:
                return consistent(self.db)
        with self._lock:
            integrity = self.db.execute("PRAGMA integrity_check").fetchall()
            dangling = self.db.execute("PRAGMA foreign_key_check").fetchall()
        return integrity == [("ok",)] and not dangling
