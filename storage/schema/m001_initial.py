"""Migration m001: the first schema, from an empty database.

Checks (one row per request, with its status, the keyed hash of its text, and what it
repeats), their reports and the report's parts (evidence, claims, the agents'
analyses, the debate's turns, the model calls), readers' feedback and chat settings.
Every part of a report references its check with ``ON DELETE CASCADE``, so that a
deleted check leaves nothing behind. On PostgreSQL ``checks`` gets a ``rowid`` column,
the insertion order SQLite gives it.
"""

from __future__ import annotations

from ..sql import StoreDatabase
from .shared import CASCADE, add_rowid

__all__ = ["apply"]

_STATEMENTS = [
    """
    CREATE TABLE checks (
        id TEXT PRIMARY KEY,
        platform TEXT NOT NULL,
        chat TEXT NOT NULL,
        requester TEXT NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
        post_text TEXT,
        text_hash TEXT NOT NULL,
        url TEXT NOT NULL DEFAULT '',
        origin TEXT NOT NULL DEFAULT '',
        published TEXT,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        error TEXT NOT NULL DEFAULT '',
        repeat_of TEXT REFERENCES checks(id) ON DELETE SET NULL,
        repeat_kind TEXT CHECK (repeat_kind IN ('exact', 'near')),
        forced INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1))
    )
    """,
    "CREATE INDEX idx_checks_text_hash ON checks (text_hash, created_at)",
    "CREATE INDEX idx_checks_requester ON checks (requester, created_at)",
    "CREATE INDEX idx_checks_chat ON checks (platform, chat, created_at)",
    "CREATE INDEX idx_checks_status ON checks (status)",
    f"""
    CREATE TABLE reports (
        check_id TEXT PRIMARY KEY {CASCADE},
        verdict TEXT NOT NULL CHECK (verdict IN ('real', 'fake', 'undetermined')),
        confidence REAL,
        summary TEXT NOT NULL DEFAULT '',
        report_json TEXT,
        n_evidence INTEGER NOT NULL,
        n_claims INTEGER NOT NULL,
        rounds INTEGER NOT NULL,
        llm_calls INTEGER NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        created_at TEXT NOT NULL
    )
    """,
    f"""
    CREATE TABLE evidence (
        check_id TEXT NOT NULL {CASCADE},
        evidence_id TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('web', 'wikipedia')),
        provider TEXT NOT NULL,
        title TEXT NOT NULL,
        url TEXT NOT NULL,
        text TEXT,
        published TEXT,
        PRIMARY KEY (check_id, evidence_id)
    )
    """,
    f"""
    CREATE TABLE claims (
        check_id TEXT NOT NULL {CASCADE},
        claim_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('core', 'sub')),
        text TEXT,
        label TEXT CHECK (label IN ('supports', 'refutes', 'not enough information')),
        reason TEXT,
        quotes_json TEXT,
        dropped_quotes INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (check_id, claim_id)
    )
    """,
    f"""
    CREATE TABLE analyses (
        check_id TEXT NOT NULL {CASCADE},
        agent TEXT NOT NULL CHECK (agent IN ('linguist', 'expert')),
        dimension TEXT NOT NULL,
        lean TEXT CHECK (lean IN ('real', 'fake')),
        text TEXT,
        status TEXT NOT NULL,
        PRIMARY KEY (check_id, agent, dimension)
    )
    """,
    f"""
    CREATE TABLE debate_turns (
        check_id TEXT NOT NULL {CASCADE},
        seq INTEGER NOT NULL,
        round INTEGER NOT NULL,
        side TEXT NOT NULL CHECK (side IN ('pro', 'con', 'judge')),
        text TEXT,
        decision TEXT CHECK (decision IN ('real', 'fake', 'continue')),
        cites_json TEXT NOT NULL DEFAULT '[]',
        status TEXT NOT NULL,
        PRIMARY KEY (check_id, seq)
    )
    """,
    f"""
    CREATE TABLE llm_calls (
        check_id TEXT NOT NULL {CASCADE},
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        step TEXT NOT NULL,
        backend TEXT NOT NULL,
        ok INTEGER NOT NULL CHECK (ok IN (0, 1)),
        error TEXT NOT NULL DEFAULT '',
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        cached_tokens INTEGER,
        latency_ms REAL NOT NULL,
        attempts INTEGER NOT NULL,
        PRIMARY KEY (check_id, seq)
    )
    """,
    f"""
    CREATE TABLE feedback (
        check_id TEXT NOT NULL {CASCADE},
        user_hash TEXT NOT NULL,
        vote INTEGER NOT NULL CHECK (vote IN (-1, 1)),
        comment TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        PRIMARY KEY (check_id, user_hash)
    )
    """,
    """
    CREATE TABLE chat_settings (
        platform TEXT NOT NULL,
        chat TEXT NOT NULL,
        key TEXT NOT NULL,
        value_json TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (platform, chat, key)
    )
    """,
]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    for statement in _STATEMENTS:
        db.execute(statement)
    add_rowid(db, "checks")
