"""The schema's steps, m001 to m009: what each migration does, in order.

:mod:`storage.migrations` lists them and applies the pending ones; a released step
never changes (a new one is appended instead).
"""

from __future__ import annotations

from sqlite_utils import Database

from .errors import StorageError
from .keys import hash_chat, rekey_text_hash
from .postgres import is_postgres
from .sql import StoreDatabase, first_row

__all__ = [
    "m001_initial",
    "m002_post_vectors",
    "m003_check_language",
    "m004_keyed_chats_and_texts",
    "m005_section_marks",
    "m006_four_outcomes",
    "m007_evidence_sources",
    "m008_deliveries",
    "m009_reviews",
]

_CASCADE = "REFERENCES checks(id) ON DELETE CASCADE"

_M001_STATEMENTS = [
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
        check_id TEXT PRIMARY KEY {_CASCADE},
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
        check_id TEXT NOT NULL {_CASCADE},
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
        check_id TEXT NOT NULL {_CASCADE},
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
        check_id TEXT NOT NULL {_CASCADE},
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
        check_id TEXT NOT NULL {_CASCADE},
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
        check_id TEXT NOT NULL {_CASCADE},
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
        check_id TEXT NOT NULL {_CASCADE},
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


def _add_rowid(db: StoreDatabase, table: str) -> None:
    """PostgreSQL: the insertion-order column SQLite gives every table."""
    if is_postgres(db):
        db.execute(f"ALTER TABLE {table} ADD COLUMN rowid BIGINT GENERATED ALWAYS AS IDENTITY")


def m001_initial(db: StoreDatabase, secret: bytes | None) -> None:
    """Checks, their reports and the report's parts, feedback and chat settings."""
    for statement in _M001_STATEMENTS:
        db.execute(statement)
    _add_rowid(db, "checks")


def m002_post_vectors(db: StoreDatabase, secret: bytes | None) -> None:
    """Post vectors (float32, little-endian) for near-duplicate search."""
    db.execute(
        f"""
        CREATE TABLE post_vectors (
            check_id TEXT PRIMARY KEY {_CASCADE},
            dim INTEGER NOT NULL CHECK (dim > 0),
            vector BLOB NOT NULL CHECK (length(vector) = 4 * dim),
            created_at TEXT NOT NULL
        )
        """
    )
    _add_rowid(db, "post_vectors")


def m003_check_language(db: StoreDatabase, secret: bytes | None) -> None:
    """The language the panel answered in (``''``: English), so a repeat is answered
    only from a check in the same language and a resumed check keeps it."""
    db.execute("ALTER TABLE checks ADD COLUMN language TEXT NOT NULL DEFAULT ''")


def m004_keyed_chats_and_texts(db: StoreDatabase, secret: bytes | None) -> None:
    """Chat ids and the keys of texts become HMACs, as user ids already were.

    A private chat's id on Telegram is its user's id, and a Discord DM's chat was
    named after its channel; an unsalted SHA-256 of a text lets anyone test whether
    it was ever checked. Every stored chat (checks and chat settings) becomes
    :func:`~storage.keys.hash_chat` of what was stored, and every text key
    :func:`~storage.keys.rekey_text_hash` of the plain digest.

    Raises:
        StorageError: the database holds rows and no secret was given.
    """
    (has_rows,) = first_row(
        db.execute("SELECT EXISTS (SELECT 1 FROM checks) OR EXISTS (SELECT 1 FROM chat_settings)")
    )
    if not has_rows:
        return
    if secret is None:
        raise StorageError("migration m004 rewrites stored ids with the secret; open with it")
    if not isinstance(db, Database):  # a PostgreSQL store is newer than this step: it is empty
        raise StorageError("migration m004 rewrites rows of SQLite stores only")
    conn = db.conn
    conn.create_function("zofia_chat", 2, lambda p, c: hash_chat(secret, p, c), deterministic=True)
    conn.create_function("zofia_text", 1, lambda d: rekey_text_hash(secret, d), deterministic=True)
    db.execute("UPDATE checks SET chat = zofia_chat(platform, chat)")
    db.execute("UPDATE checks SET text_hash = zofia_text(text_hash) WHERE text_hash != ''")
    db.execute("UPDATE chat_settings SET chat = zofia_chat(platform, chat)")


def m005_section_marks(db: StoreDatabase, secret: bytes | None) -> None:
    """The "section already posted" marks of the bots' buttons get a table of their own,
    tied to their check (so they go when it goes), out of the chat settings."""
    db.execute(
        f"""
        CREATE TABLE section_marks (
            check_id TEXT NOT NULL {_CASCADE},
            kind TEXT NOT NULL,
            value_json TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (check_id, kind)
        )
        """
    )
    if is_postgres(db):  # SQLite-only string functions, and no old marks to move
        return
    db.execute(
        """
        INSERT OR REPLACE INTO section_marks (check_id, kind, value_json, updated_at)
        SELECT substr(key, 8, instr(substr(key, 8), ':') - 1),
               substr(substr(key, 8), instr(substr(key, 8), ':') + 1),
               value_json, updated_at
        FROM chat_settings
        WHERE key LIKE 'opened:%:%'
          AND substr(key, 8, instr(substr(key, 8), ':') - 1) IN (SELECT id FROM checks)
        """
    )
    db.execute("DELETE FROM chat_settings WHERE key LIKE 'opened:%'")


_VERDICTS = (
    "'true', 'false', 'misleading', 'unproven', 'undetermined', 'no_claim', 'satire', 'scam'"
)
_DECISIONS = "'true', 'false', 'misleading', 'unproven', 'continue'"
_MODERN = "CASE {0} WHEN 'real' THEN 'true' WHEN 'fake' THEN 'false' ELSE {0} END"


def m006_four_outcomes(db: StoreDatabase, secret: bytes | None) -> None:
    """Verdicts on four outcomes (true, false, misleading, unproven) and triage's kinds,
    where ZoFia's real / fake were; RADAR's debaters and phases in the debate rows.
    SQLite cannot change a CHECK, so both tables are rebuilt; stored real and fake
    become true and false (report JSON is read the same way when it is loaded)."""
    db.execute(
        f"""
        CREATE TABLE reports_v6 (
            check_id TEXT PRIMARY KEY {_CASCADE},
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
            check_id TEXT NOT NULL {_CASCADE},
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


def m007_evidence_sources(db: StoreDatabase, secret: bytes | None) -> None:
    """Evidence rows from every source a report has: published fact-checks and findings
    on the post's pictures besides web pages and Wikipedia (the CHECK allowed the first
    two only, so a report with either could not be saved). The table is rebuilt."""
    db.execute(
        f"""
        CREATE TABLE evidence_v7 (
            check_id TEXT NOT NULL {_CASCADE},
            evidence_id TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('web', 'wikipedia', 'factcheck', 'image')),
            provider TEXT NOT NULL,
            title TEXT NOT NULL,
            url TEXT NOT NULL,
            text TEXT,
            published TEXT,
            PRIMARY KEY (check_id, evidence_id)
        )
        """
    )
    db.execute("INSERT INTO evidence_v7 SELECT * FROM evidence")
    db.execute("DROP TABLE evidence")
    db.execute("ALTER TABLE evidence_v7 RENAME TO evidence")


def m008_deliveries(db: StoreDatabase, secret: bytes | None) -> None:
    """Where each check's card is to be posted, for the bot that delivers it: any replica,
    once (``claimed_at`` is a lease; ``delivered_at`` ends it). ``target_json`` holds the
    platform's raw chat and message ids, needed to post, and is blanked on delivery; the
    retention purge deletes the row."""
    db.execute(
        f"""
        CREATE TABLE deliveries (
            check_id TEXT PRIMARY KEY {_CASCADE},
            platform TEXT NOT NULL,
            target_json TEXT NOT NULL,
            created_at TEXT NOT NULL,
            claimed_at TEXT,
            delivered_at TEXT
        )
        """
    )
    if is_postgres(db):  # SQLite's rowid is its tables' key already
        db.execute("CREATE INDEX idx_post_vectors_rowid ON post_vectors (rowid)")


_APPEND_ONLY = "reviews are never edited: a newer review supersedes one"


def m009_reviews(db: StoreDatabase, secret: bytes | None) -> None:
    """Moderators' reviews of verdicts (:mod:`storage.reviews`), an audit trail: rows are
    only added (a trigger refuses an ``UPDATE``); the newest is the one in force."""
    db.execute(
        f"""
        CREATE TABLE reviews (
            id TEXT PRIMARY KEY,
            check_id TEXT NOT NULL {_CASCADE},
            reviewer TEXT NOT NULL,
            platform TEXT NOT NULL,
            created_at TEXT NOT NULL,
            from_verdict TEXT NOT NULL,
            to_verdict TEXT NOT NULL
                CHECK (to_verdict IN ('true', 'false', 'misleading', 'unproven')),
            note TEXT NOT NULL DEFAULT '',
            link TEXT NOT NULL DEFAULT ''
        )
        """
    )
    db.execute("CREATE INDEX idx_reviews_check ON reviews (check_id, created_at)")
    _add_rowid(db, "reviews")
    trigger = "CREATE TRIGGER reviews_append_only BEFORE UPDATE ON reviews"
    if not is_postgres(db):
        db.execute(f"{trigger} BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END")
        return
    db.execute(
        "CREATE FUNCTION reviews_append_only() RETURNS trigger LANGUAGE plpgsql"
        f" AS $$ BEGIN RAISE EXCEPTION '{_APPEND_ONLY}'; END $$"
    )
    db.execute(f"{trigger} FOR EACH ROW EXECUTE FUNCTION reviews_append_only()")
