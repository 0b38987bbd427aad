"""The schema, as an ordered list of named migrations: one module each.

``m001_initial`` … ``m023_media_readings`` each say what they change and why, and apply it
(``apply(db, secret)``); :data:`MIGRATIONS` here lists them in order, and
:func:`migrate` applies the pending ones; :mod:`storage.schema.shared` holds what
several of them use. A new migration is a new module, appended to the list.

Each migration runs in its own write transaction together with the row that records
its name (its module's) in ``_migrations``; a migration that raises leaves no trace
and stays pending. Migrations are only ever appended: a released one never changes,
nor does the name recorded for it, so any older database reaches the current schema by
running the ones it lacks, in order.

The same list builds a PostgreSQL store (:mod:`storage.postgres` rewrites the column
types SQLite names differently). There, ``checks``, ``post_vectors``, ``reviews``,
``shown_cards`` and ``_migrations`` also get an identity column named ``rowid``,
SQLite's implicit one, so that insertion order reads alike; and the data rewrites of
m004 and m005 have nothing to rewrite, since a PostgreSQL store starts at this version.
"""

from __future__ import annotations

import datetime as dt

from ..errors import StorageError
from ..postgres import is_postgres
from ..sql import StoreDatabase
from ..transaction import write_transaction
from . import (
    m001_initial,
    m002_post_vectors,
    m003_check_language,
    m004_keyed_chats_and_texts,
    m005_section_marks,
    m006_four_outcomes,
    m007_evidence_sources,
    m008_deliveries,
    m009_reviews,
    m010_attempts_and_token_charges,
    m011_shown_cards,
    m012_checks_by_time,
    m013_review_scope_and_retries,
    m014_follow_up_charges,
    m015_purgeable_review_notes,
    m016_sealed_chat_ids,
    m017_api_keys,
    m018_checks_in_groups,
    m019_early_reports,
    m020_api_webhooks,
    m021_seen_messages,
    m022_heard_notes,
    m023_media_readings,
)
from .shared import Migration

__all__ = ["MIGRATIONS", "applied_migrations", "migrate"]

# Each name is the one recorded in databases: never renamed (its module is named alike).
MIGRATIONS: list[tuple[str, Migration]] = [
    ("m001_initial", m001_initial.apply),
    ("m002_post_vectors", m002_post_vectors.apply),
    ("m003_check_language", m003_check_language.apply),
    ("m004_keyed_chats_and_texts", m004_keyed_chats_and_texts.apply),
    ("m005_section_marks", m005_section_marks.apply),
    ("m006_four_outcomes", m006_four_outcomes.apply),
    ("m007_evidence_sources", m007_evidence_sources.apply),
    ("m008_deliveries", m008_deliveries.apply),
    ("m009_reviews", m009_reviews.apply),
    ("m010_attempts_and_token_charges", m010_attempts_and_token_charges.apply),
    ("m011_shown_cards", m011_shown_cards.apply),
    ("m012_checks_by_time", m012_checks_by_time.apply),
    ("m013_review_scope_and_retries", m013_review_scope_and_retries.apply),
    ("m014_follow_up_charges", m014_follow_up_charges.apply),
    ("m015_purgeable_review_notes", m015_purgeable_review_notes.apply),
    ("m016_sealed_chat_ids", m016_sealed_chat_ids.apply),
    ("m017_api_keys", m017_api_keys.apply),
    ("m018_checks_in_groups", m018_checks_in_groups.apply),
    ("m019_early_reports", m019_early_reports.apply),
    ("m020_api_webhooks", m020_api_webhooks.apply),
    ("m021_seen_messages", m021_seen_messages.apply),
    ("m022_heard_notes", m022_heard_notes.apply),
    ("m023_media_readings", m023_media_readings.apply),
]


def _ensure_migrations_table(db: StoreDatabase) -> None:
    rowid = ", rowid BIGINT GENERATED ALWAYS AS IDENTITY" if is_postgres(db) else ""
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations"
        f" (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL{rowid})"
    )


def applied_migrations(db: StoreDatabase) -> list[str]:
    """The names of the migrations applied to ``db``, in the order they were applied.

    Args:
        db: the database.

    Returns:
        Migration names; empty for a new database.
    """
    if not db.table("_migrations").exists():
        return []
    return [row[0] for row in db.execute("SELECT name FROM _migrations ORDER BY rowid")]


def migrate(
    db: StoreDatabase, upto: str | None = None, *, secret: bytes | None = None
) -> list[str]:
    """Apply the pending migrations in order, each in its own transaction.

    Safe to call on every open and from several processes at once: each
    migration re-checks, under the write lock, that nobody applied it first.

    Args:
        db: the database.
        upto: the last migration to apply (inclusive); ``None`` applies all.
            Tests use it to build a database as an older version left it.
        secret: the key of the stored identities, for migrations that rewrite them.

    Returns:
        The names of the migrations this call applied.

    Raises:
        ValueError: ``upto`` names no migration.
        StorageError: the database has migrations this code does not know
            (a newer version of zofia wrote it).
    """
    names = [name for name, _ in MIGRATIONS]
    if upto is not None and upto not in names:
        raise ValueError(f"unknown migration {upto!r}; known: {', '.join(names)}")
    with write_transaction(db):  # two processes starting at once create it once
        _ensure_migrations_table(db)
    unknown = set(applied_migrations(db)) - set(names)
    if unknown:
        raise StorageError(
            "the database has migrations this version does not know"
            f" ({', '.join(sorted(unknown))}): a newer zofia wrote it"
        )
    wanted = names if upto is None else names[: names.index(upto) + 1]
    applied_now: list[str] = []
    for name, apply in MIGRATIONS:
        if name not in wanted:
            break
        with write_transaction(db):
            done = db.execute("SELECT 1 FROM _migrations WHERE name = ?", [name]).fetchone()
            if done:
                continue
            apply(db, secret)
            db.table("_migrations").insert(
                {"name": name, "applied_at": dt.datetime.now(dt.UTC).isoformat()}
            )
        applied_now.append(name)
    return applied_now
