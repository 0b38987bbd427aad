"""The schema's step m010: what the shares of the limits count.

Kept apart from :mod:`storage.schema_steps` (m001 to m009) only so that both stay
short; :mod:`storage.migrations` lists every step in order.
"""

from __future__ import annotations

from .sql import StoreDatabase

__all__ = ["m010_attempts_and_token_charges"]


def m010_attempts_and_token_charges(db: StoreDatabase, secret: bytes | None) -> None:
    """Requests as the limits count them (``attempts``: one row per admitted request, see
    :mod:`storage.attempts`), and each check's charge on the day's token budget
    (``checks.tokens``: reserved when its engine run is written, its real count once its
    report is stored). Checks stored before have their reports' counts."""
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
