"""The store's schema on both engines: a new file's tables and pragmas, each migration one
named module, an older database upgraded with its rows intact (and its raw ids sealed),
the private modes of the file and its folder, and the public names of ``storage``."""

from __future__ import annotations

import dataclasses
import stat
import sys
from pathlib import Path

import pytest
from sqlite_utils import Database

from tests.storage.stored import (
    POST,
    TABLES,
    done_check,
    dump,
    legacy_done_check,
    make_report,
    new_check,
)

import storage
import storage.schema
from storage import (
    MIGRATIONS,
    CheckStore,
    StorageError,
    applied_migrations,
    hash_chat,
    keyed_text_hash,
    migrate,
    open_database,
)
from storage.postgres import StoreDatabase
from storage.settings import StorageSettings

ALL_MIGRATIONS = [
    "m001_initial",
    "m002_post_vectors",
    "m003_check_language",
    "m004_keyed_chats_and_texts",
    "m005_section_marks",
    "m006_four_outcomes",
    "m007_evidence_sources",
    "m008_deliveries",
    "m009_reviews",
    "m010_attempts_and_token_charges",
    "m011_shown_cards",
    "m012_checks_by_time",
    "m013_review_scope_and_retries",
    "m014_follow_up_charges",
    "m015_purgeable_review_notes",
    "m016_sealed_chat_ids",
    "m017_api_keys",
    "m018_checks_in_groups",
    "m019_early_reports",
    "m020_api_webhooks",
    "m021_seen_messages",
    "m022_heard_notes",
    "m023_media_readings",
]
KEY = b"k" * 32


def test_a_new_file_gets_every_table_wal_and_foreign_keys(tmp_path: Path) -> None:
    path = tmp_path / "zofia.db"
    db = open_database(path)
    assert set(db.table_names()) == TABLES
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert applied_migrations(db) == ALL_MIGRATIONS
    assert [name for name, _ in MIGRATIONS] == applied_migrations(db)
    db.close()
    again = open_database(path)
    assert migrate(again) == []
    assert applied_migrations(again) == ALL_MIGRATIONS
    assert CheckStore(again).integrity_ok()
    again.close()


def test_each_migration_is_one_module_named_as_it_is_recorded() -> None:
    """storage/schema/ holds one module per migration, named as ``_migrations`` records
    it, each saying what it changes; the runner lists them all, in their order."""
    folder = Path(storage.schema.__file__).parent
    modules = sorted(path.stem for path in folder.glob("m[0-9][0-9][0-9]_*.py"))
    assert modules == ALL_MIGRATIONS == [name for name, _ in MIGRATIONS]
    for name, apply in MIGRATIONS:
        module = sys.modules[apply.__module__]
        assert module.__name__ == f"storage.schema.{name}"
        assert module.__doc__ and module.__doc__.startswith(f"Migration {name[:4]}: ")


def test_an_older_database_is_upgraded_with_its_rows_intact(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = Database(path)
    assert migrate(old, upto="m001_initial") == ["m001_initial"]
    assert "post_vectors" not in old.table_names()
    row = legacy_done_check(CheckStore(old))
    assert old.execute("SELECT verdict FROM reports").fetchone()[0] == "real"
    old.close()

    db = open_database(path, secret=KEY)
    assert applied_migrations(db) == ALL_MIGRATIONS
    store = CheckStore(db)
    stored = store.checks.get(row.id)
    assert stored is not None and stored.finished_at is not None
    # m004: the chat and the text key are HMACs now; nothing else changed.
    assert stored.chat == hash_chat(KEY, "telegram", "chat-1") != row.chat
    assert stored.text_hash == keyed_text_hash(KEY, POST)
    assert stored == dataclasses.replace(
        row,
        status="done",
        finished_at=stored.finished_at,
        chat=stored.chat,
        text_hash=stored.text_hash,
    )
    # m006: real / fake became true / false, in the rows and in the report read back.
    assert store.reports.get(row.id) == make_report()
    assert db.execute("SELECT verdict FROM reports").fetchone()[0] == "true"
    decisions = [r[0] for r in db.execute("SELECT decision FROM debate_turns WHERE side = 'judge'")]
    assert decisions == ["continue", "true"]
    ids, matrix = store.vectors.load()
    assert ids == [] and matrix.shape == (0, 0)
    db.close()


def test_raw_chat_ids_are_rewritten_only_with_the_secret(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = Database(path)
    migrate(old, upto="m003_check_language")
    store = CheckStore(old)
    new_check(store, chat="123456789")  # a private chat: Telegram's id of the user
    store.chats.set("telegram", "123456789", "language", "French")
    old.close()
    with pytest.raises(StorageError, match="secret"):
        open_database(path)
    db = open_database(path, secret=KEY)
    raw = dump(db)
    assert "123456789" not in raw
    assert hash_chat(KEY, "telegram", "123456789") in raw
    assert (
        CheckStore(db).chats.get("telegram", hash_chat(KEY, "telegram", "123456789"), "language")
        == "French"
    )
    db.close()


def test_a_new_database_and_its_wal_are_private(tmp_path: Path) -> None:
    path = tmp_path / "zofia.db"
    db = open_database(path)
    done_check(CheckStore(db))
    for name in ("zofia.db", "zofia.db-wal"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    db.close()


def test_a_new_data_folder_is_private(tmp_path: Path) -> None:
    from storage.opening import open_store

    folder = tmp_path / "data" / "zofia"
    store, _ = open_store(StorageSettings(path=str(folder / "zofia.db")))
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "zofia.db.secret").stat().st_mode) == 0o600
    store.close()


def test_migrate_refuses_unknown_names_and_newer_databases(db: StoreDatabase) -> None:
    with pytest.raises(ValueError, match="unknown migration"):
        migrate(db, upto="m999")
    db.table("_migrations").insert({"name": "m003_future", "applied_at": "2030-01-01"})
    with pytest.raises(StorageError, match="newer zofia"):
        migrate(db)


def test_public_names() -> None:
    assert sorted(storage.__all__) == [
        "CheckNotFoundError",
        "CheckRow",
        "CheckStatus",
        "CheckStore",
        "MIGRATIONS",
        "RepeatKind",
        "RequestScope",
        "StorageError",
        "applied_migrations",
        "default_database_path",
        "hash_chat",
        "hash_user",
        "keyed_text_hash",
        "load_or_create_secret",
        "migrate",
        "new_check_id",
        "open_database",
        "storable_text",
        "text_hash",
    ]
