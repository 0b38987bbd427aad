"""Migration m010: what the shares of the limits count.

Requests as the limits count them: ``attempts``, one row per admitted request (who
asked, in which chat, when it began and ended; :mod:`storage.attempts`), indexed by
requester and by chat for the per-user and per-chat shares. And each check's charge on
the day's token budget: ``checks.tokens``, reserved when its engine run is written and
set to its real count once its report is stored. Checks stored before (repeats aside,
which ran no engine) get their reports' counts, so the day's budget counts them too.
"""

from __future__ import annotations

from ..sql import StoreDatabase

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute(
        """
        CREATE TABLE attempts (
            id TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            chat TEXT NOT NULL,
            requester TEXT NOT NULL,
            private INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            ended_at TEXT
        )
        """
    )
    db.execute("CREATE INDEX idx_attempts_requester ON attempts (requester, created_at)")
    db.execute("CREATE INDEX idx_attempts_chat ON attempts (platform, chat, created_at)")
    db.execute("ALTER TABLE checks ADD COLUMN tokens INTEGER")
    db.execute(
        "UPDATE checks SET tokens = (SELECT r.prompt_tokens + r.completion_tokens"
        " FROM reports r WHERE r.check_id = checks.id) WHERE repeat_of IS NULL"
    )
