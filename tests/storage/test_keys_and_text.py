"""Awkward text and the keys on both engines: text stored safely whatever it holds, the
text hash's normalisation, keyed user hashes, the secret file, check ids."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest

from tests.storage.stored import done_check, dump, make_report, new_check

from storage import (
    CheckStore,
    StorageError,
    hash_user,
    load_or_create_secret,
    new_check_id,
    text_hash,
)
from storage.postgres import StoreDatabase
from storage.settings import StorageSettings
from zofia_engine.post import MAX_POST_CHARS


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("a" * MAX_POST_CHARS, "a" * MAX_POST_CHARS),  # the longest a post can be
        ("before\x00after", "before\ufffdafter"),  # PostgreSQL text holds no NUL
        ("broken \ud800 surrogate", "broken \ufffd surrogate"),
        ("北京宣布新的交通规则。", "北京宣布新的交通规则。"),
        ("أعلنت الحكومة عن خطة جديدة", "أعلنت الحكومة عن خطة جديدة"),
    ],
    ids=["empty", "longest", "nul", "lone-surrogate", "chinese", "arabic"],
)
def test_awkward_text_is_stored_safely(store: CheckStore, text: str, expected: str) -> None:
    row = new_check(store, text)
    assert row.post_text == expected
    stored = store.checks.get(row.id)
    assert stored is not None and stored.post_text == expected
    report = make_report(marker=text, summary=text)
    store.reports.save(row.id, report)
    back = store.reports.get(row.id)
    # The report's JSON escapes NUL ("\u0000"), so there it is kept as it was.
    in_report = text if "\x00" in text else expected
    assert back is not None and back.summary == in_report
    assert back.evidence[0].text == f"City hall confirmed the closure. {in_report}"
    assert store.integrity_ok()


def test_text_hash_normalises_case_width_and_spacing() -> None:
    assert text_hash("Hello   World") == text_hash(" hello\n\tworld ")
    assert text_hash("Ｈｅｌｌｏ") == text_hash("hello")
    assert text_hash("STRASSE") == text_hash("straße")
    assert text_hash("hello") != text_hash("hello!")
    assert re.fullmatch("[0-9a-f]{64}", text_hash("\ud800"))


def test_user_hashes_are_keyed_and_never_the_raw_id(store: CheckStore, db: StoreDatabase) -> None:
    key, other_key = b"k" * 32, b"q" * 32
    who = hash_user(key, "telegram", "987654321")
    assert who == hash_user(key, "telegram", "987654321")
    assert re.fullmatch("[0-9a-f]{64}", who)
    assert who != hash_user(other_key, "telegram", "987654321")
    assert who != hash_user(key, "discord", "987654321")
    row = done_check(store, requester=who)
    store.feedback.add(row.id, hash_user(key, "telegram", "555000555"), 1)
    text = dump(db)
    assert who in text and "987654321" not in text and "555000555" not in text


def test_the_secret_file_is_private_and_reused(tmp_path: Path) -> None:
    db_path = tmp_path / "zofia.db"
    secret = load_or_create_secret(StorageSettings(), db_path)
    secret_file = tmp_path / "zofia.db.secret"
    assert len(secret) == 32
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    assert secret_file.read_text().strip() == secret.hex()
    assert load_or_create_secret(StorageSettings(), db_path) == secret
    configured = "a-configured-secret-0123456789"
    assert load_or_create_secret(StorageSettings(secret=configured), db_path) == configured.encode()
    with pytest.raises(ValueError, match="at least 16 characters"):
        StorageSettings(secret="short")
    memory = load_or_create_secret(StorageSettings(), Path(":memory:"))
    assert len(memory) == 32 and not Path(":memory:.secret").exists()
    secret_file.write_text("not hex\n")
    with pytest.raises(StorageError, match="hex secret"):
        load_or_create_secret(StorageSettings(), db_path)


def test_check_ids_look_unguessable() -> None:
    ids = {new_check_id() for _ in range(1000)}
    assert len(ids) == 1000
    # Never a leading "-": `zofia show -x…` would read the id as an option.
    assert all(re.fullmatch("[A-Za-z0-9][A-Za-z0-9_-]{15}", check_id) for check_id in ids)
