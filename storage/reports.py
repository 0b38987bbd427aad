"""``store.reports``: a finished check's report, whole as JSON and in the rows of its
parts (evidence, claims, analyses, debate turns and rulings, model calls)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from zofia_engine.report import Report

from .errors import StorageError
from .locked import StorePart
from .rows import report_rows, serializable_report, vector_blob

__all__ = ["Reports"]

_EXPORT_BATCH = 500


class Reports(StorePart):
    """The reports of a store."""

    def save(
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
        now = self.db.now()
        rows = report_rows(check_id, report, report_json, now)
        with self.db.write():
            self.db.require_check(check_id)
            if self.db.execute("SELECT 1 FROM reports WHERE check_id = ?", [check_id]).fetchone():
                raise StorageError(f"check {check_id!r} already has a report")
            for table, table_rows in rows.items():
                if table_rows:
                    self.db.table(table).insert_all(table_rows)
            if blob is not None:
                self.db.table("post_vectors").insert(
                    {"check_id": check_id, "dim": blob[0], "vector": blob[1], "created_at": now}
                )
            # Its charge on the day's budget becomes what it really spent.
            self.db.execute(
                "UPDATE checks SET status = 'done', finished_at = ?, error = '', tokens = ?"
                " WHERE id = ?",
                [now, report.usage.prompt_tokens + report.usage.completion_tokens, check_id],
            )

    def save_early(self, check_id: str, report: Report) -> None:
        """Keep the early report of a running check (the verdict fixed before the debate,
        ``report.complete`` false) until its report is saved (then
        :meth:`drop_early`); a second early report of the check replaces the first.

        Raises:
            CheckNotFoundError: no such check.
        """
        _, report_json = serializable_report(report)
        with self.db.write():
            self.db.require_check(check_id)
            self.db.execute("DELETE FROM early_reports WHERE check_id = ?", [check_id])
            row = {"check_id": check_id, "report_json": report_json, "created_at": self.db.now()}
            self.db.table("early_reports").insert(row)

    def drop_early(self, check_id: str) -> None:
        """Forget the early report of a check whose report is saved (or that ended)."""
        self.db.execute("DELETE FROM early_reports WHERE check_id = ?", [check_id])

    def early(self, check_id: str) -> Report | None:
        """The early report of a check still running; ``None`` when it has none (its
        verdict waits for the judge, it has finished, or it was purged)."""
        row = self.db.first("SELECT report_json FROM early_reports WHERE check_id = ?", [check_id])
        return None if row is None else Report.model_validate_json(row[0])

    def get(self, check_id: str) -> Report | None:
        """The check's report, as the engine returned it; ``None`` if the check has none
        (yet) or it was purged."""
        row = self.db.first("SELECT report_json FROM reports WHERE check_id = ?", [check_id])
        if row is None or row[0] is None:
            return None
        return Report.model_validate_json(row[0])

    def export(self) -> Iterator[dict[str, Any]]:
        """Every ``done`` check with its verdict and report, oldest first, read in batches.

        Yields:
            ``id``, ``platform``, ``chat``, ``requester`` (the user hash),
            ``created_at`` (ISO text), ``repeat_of``, ``repeat_kind``,
            ``verdict``, ``confidence`` and ``report`` (the parsed JSON, or
            ``None`` when purged or when the check is a repeat without its own).
        """
        last_rowid = 0
        while True:
            batch = self.db.dicts(
                "SELECT c.rowid AS _rowid, c.id, c.platform, c.chat, c.requester,"
                " c.created_at, c.repeat_of, c.repeat_kind, r.verdict, r.confidence,"
                " r.report_json FROM checks c LEFT JOIN reports r ON r.check_id = c.id"
                " WHERE c.status = 'done' AND c.rowid > ? ORDER BY c.rowid LIMIT ?",
                [last_rowid, _EXPORT_BATCH],
            )
            if not batch:
                return
            last_rowid = batch[-1]["_rowid"]
            for row in batch:
                report_json = row.pop("report_json")
                row.pop("_rowid")
                yield {**row, "report": None if report_json is None else json.loads(report_json)}

    def reviewed(self, *, chat_reviews: bool = False) -> Iterator[dict[str, Any]]:
        """Every check reviewed for every chat (by a reviewer the settings name, or the
        operator), with the newest such review, oldest check first; ``chat_reviews``:
        a chat's moderators' reviews too, each of which applies in its own chat only.
        A review's note is never read: it may name people.

        Yields:
            ``id``, ``text`` (the post; ``None`` once purged), ``published``,
            ``machine`` (the machine's verdict), ``label`` (the review's verdict) and
            ``reviewed_at`` (ISO text).
        """
        which = "" if chat_reviews else " AND w.chat = ''"
        yield from self.db.dicts(
            "SELECT c.id, c.post_text AS text, c.published, r.verdict AS machine,"
            " v.to_verdict AS label, v.created_at AS reviewed_at"
            " FROM checks c JOIN reports r ON r.check_id = c.id"
            " JOIN reviews v ON v.check_id = c.id"
            f" WHERE v.rowid = (SELECT w.rowid FROM reviews w WHERE w.check_id = c.id{which}"
            " ORDER BY w.created_at DESC, w.rowid DESC LIMIT 1)"
            " ORDER BY c.rowid"
        )
