"""Migration m006: verdicts on four outcomes, and RADAR's debaters and phases.

Verdicts become true, false, misleading and unproven (and triage's kinds: undetermined,
no_claim, satire, scam) where ZoFia's real / fake were; the debate's rows take RADAR's
debaters (politician, scientist) and phases (opening, rebuttal, closing). SQLite cannot
change a CHECK constraint, so ``reports`` and ``debate_turns`` are rebuilt, and the
stored real and fake become true and false (a report's JSON is read the same way when
it is loaded).
"""

from __future__ import annotations

from ..sql import StoreDatabase
from .shared import CASCADE

__all__ = ["apply"]

_VERDICTS = (
    "'true', 'false', 'misleading', 'unproven', 'undetermined', 'no_claim', 'satire', 'scam'"
)
_DECISIONS = "'true', 'false', 'misleading', 'unproven', 'continue'"
_MODERN = "CASE {0} WHEN 'real' THEN 'true' WHEN 'fake' THEN 'false' ELSE {0} END"


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute(
        f"""
        CREATE TABLE reports_v6 (
            check_id TEXT PRIMARY KEY {CASCADE},
            verdict TEXT NOT NULL CHECK (verdict IN ({_VERDICTS})),
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
        """
    )
    db.execute(
        f"""
        INSERT INTO reports_v6 SELECT check_id, {_MODERN.format("verdict")}, confidence,
            summary, report_json, n_evidence, n_claims, rounds, llm_calls, prompt_tokens,
            completion_tokens, created_at FROM reports
        """
    )
    db.execute("DROP TABLE reports")
    db.execute("ALTER TABLE reports_v6 RENAME TO reports")
    db.execute(
        f"""
        CREATE TABLE debate_turns_v6 (
            check_id TEXT NOT NULL {CASCADE},
            seq INTEGER NOT NULL,
            round INTEGER NOT NULL,
            side TEXT NOT NULL CHECK (side IN ('pro', 'con', 'politician', 'scientist', 'judge')),
            phase TEXT CHECK (phase IN ('opening', 'rebuttal', 'closing')),
            text TEXT,
            decision TEXT CHECK (decision IN ({_DECISIONS})),
            cites_json TEXT NOT NULL DEFAULT '[]',
            status TEXT NOT NULL,
            PRIMARY KEY (check_id, seq)
        )
        """
    )
    db.execute(
        f"""
        INSERT INTO debate_turns_v6 SELECT check_id, seq, round, side, NULL, text,
            {_MODERN.format("decision")}, cites_json, status FROM debate_turns
        """
    )
    db.execute("DROP TABLE debate_turns")
    db.execute("ALTER TABLE debate_turns_v6 RENAME TO debate_turns")
