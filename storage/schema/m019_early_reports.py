"""Migration m019: the early report of a check whose verdict was fixed before its debate.

``early_reports`` holds, while a check runs, the report the engine gives as soon as the
evidence fixes the verdict (``verdict_ready``: verdict, confidence, summary and
evidence final; the debate still being written), so that the HTTP API's poll can show
``verdict`` before ``done`` on any process. The finished report replaces it (its row is
deleted when the report is saved), and the purge deletes what is left of a check that
never finished.
"""

from __future__ import annotations

from ..sql import StoreDatabase

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute(
        """
        CREATE TABLE early_reports (
            check_id TEXT PRIMARY KEY REFERENCES checks(id),
            report_json TEXT NOT NULL,
            created_at TEXT NOT NULL
        )
        """
    )
