"""The store on both engines: schema and migrations, reports in and out, repeats, limits,
retention. Every test that takes the ``db`` or ``store`` fixture runs on SQLite and on a
real PostgreSQL server (``postgres_url``, started by the suite; a loopback peer, so
those runs are in the slow tier); those about the SQLite file itself (its mode, its WAL,
its pragmas) run on SQLite only."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
import sqlite3
import stat
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from typing import TypedDict, Unpack

import numpy as np
import psycopg
import pytest
from psycopg import sql
from sqlite_utils import Database

from tests.peers.fixtures.store_fixtures import T0, Clock
from tests.peers.servers.pg_server import PostgresServer

import storage
import storage.postgres as postgres_module
import storage.schema
import storage.vectors as vectors_module
from storage import (
    MIGRATIONS,
    CheckNotFoundError,
    CheckRow,
    CheckStore,
    StorageError,
    applied_migrations,
    hash_chat,
    hash_user,
    keyed_text_hash,
    load_or_create_secret,
    migrate,
    new_check_id,
    open_database,
    text_hash,
)
from storage.opening import open_postgres
from storage.postgres import StoreDatabase, is_postgres
from storage.rows import CheckStatus, RepeatKind, report_rows, serializable_report, to_iso
from storage.settings import StorageSettings
from storage.sql import first_row
from zofia_engine.post import MAX_POST_CHARS, Post
from zofia_engine.records.notes import note
from zofia_engine.records.stage1 import Keyword
from zofia_engine.report import (
    Analyses,
    ClaimResult,
    Confidence,
    Debate,
    DebateTurn,
    EvidenceItem,
    ExpertFinding,
    JudgeRuling,
    LinguistFinding,
    LLMCall,
    Quote,
    Report,
    Usage,
)

TABLES = {
    "_migrations",
    "api_keys",
    "shown_cards",
    "reviews",
    "attempts",
    "checks",
    "reports",
    "evidence",
    "claims",
    "analyses",
    "debate_turns",
    "llm_calls",
    "feedback",
    "chat_settings",
    "post_vectors",
    "section_marks",
    "deliveries",
}
POST = "The mayor of Springfield said the river bridge will close for all of 2027."


@pytest.fixture
def store(db: StoreDatabase, clock: Clock) -> CheckStore:
    return CheckStore(db, clock=clock)


def make_report(*, marker: str = "", summary: str = "The bridge closure is confirmed.") -> Report:
    """A report as a full check returns it: 2 documents, 3 claims, a 2-round debate."""
    calls = [
        LLMCall(role=role, step=step, backend="openai:gpt", prompt_tokens=300, completion_tokens=40)
        for role, step in [
            ("linguist", "style"),
            ("linguist", "emotion"),
            ("expert", "domain"),
            ("expert", "analysis"),
            ("claims", "extract"),
            ("debater", "pro-1"),
            ("debater", "con-1"),
            ("judge", "round-1"),
            ("debater", "pro-2"),
            ("debater", "con-2"),
        ]
    ] + [
        LLMCall(
            role="judge",
            step="round-2",
            backend="openai:gpt",
            ok=False,
            error="timeout",
            cached_tokens=128,
            latency_ms=30000.5,
            attempts=3,
        )
    ]
    return Report(
        verdict="true",
        confidence=Confidence(value=0.82, basis="logprobs"),
        summary=summary,
        keywords=[
            Keyword(text="Springfield", label="LOC", salience=0.9, mmr_score=0.9, lambda_k=1)
        ],
        evidence=[
            EvidenceItem(
                id="web-1",
                source="web",
                provider="brave",
                title="Bridge to close",
                url="https://news.example/bridge",
                text=f"City hall confirmed the closure. {marker}",
                published=dt.date(2026, 2, 27),
            ),
            EvidenceItem(
                id="wiki-1",
                source="wikipedia",
                provider="offline",
                title="Springfield",
                url="https://en.wikipedia.org/wiki/Springfield",
                text="Springfield is a city.",
            ),
        ],
        claims=[
            ClaimResult(
                id="c0",
                kind="core",
                text=f"The bridge closes in 2027. {marker}",
                label="supports",
                reason="City hall confirmed it.",
                quotes=[Quote(text="City hall confirmed the closure.", evidence_id="web-1")],
                dropped_quotes=1,
                context=["web-1"],
            ),
            ClaimResult(id="c1", kind="sub", text="The mayor said so.", label="supports"),
            ClaimResult(
                id="c2", kind="sub", text="For all of 2027.", label="not enough information"
            ),
        ],
        analyses=Analyses(
            linguist=[
                LinguistFinding(dimension="style", analysis=f"Neutral. {marker}", lean="real"),
                LinguistFinding(dimension="emotion", analysis="Calm.", lean="real"),
                LinguistFinding(dimension="source", status="failed", error="timeout"),
            ],
            expert=ExpertFinding(
                domain="civil engineering",
                expert_role="city planner",
                knowledge_concordance="Closures are announced a year ahead.",
                logical_integrity="Consistent.",
                lean="real",
            ),
        ),
        debate=Debate(
            turns=[
                DebateTurn(
                    round=1, side="pro", argument=f"web-1 confirms. {marker}", cites=["web-1"]
                ),
                DebateTurn(round=1, side="con", rebuttal="Weak.", argument="No date.", cites=[]),
                DebateTurn(round=2, side="pro", argument="The date is there.", cites=["web-1"]),
                DebateTurn(round=2, side="con", argument="Still unsure.", status="failed"),
            ],
            rulings=[
                JudgeRuling(round=1, decision="continue", reason="Need more."),
                JudgeRuling(round=2, decision="true", reason="The bridge closure is confirmed."),
            ],
            rounds=2,
            max_rounds=5,
            decided_in_round=2,
        ),
        usage=Usage.of(calls),
        timings={"retrieval": 1200.0, "debate": 5300.5},
        notes=[note("no open-web evidence")],
    )


class _CheckFields(TypedDict, total=False):
    """What a test may set on a new check (``Checks.create``'s keywords)."""

    platform: str
    chat: str
    requester: str
    status: CheckStatus
    repeat_of: str | None
    repeat_kind: RepeatKind | None
    forced: bool
    tokens: int | None
    in_group: bool


#: where new_check asks, as find_exact and in_flight take it
HERE = {"platform": "telegram", "chat": "chat-1"}


def new_check(store: CheckStore, text: str = POST, **fields: Unpack[_CheckFields]) -> CheckRow:
    fields.setdefault("platform", "telegram")
    fields.setdefault("chat", "chat-1")
    fields.setdefault("requester", "u-hash")
    return store.checks.create(
        **fields,
        post=Post(text=text, url="https://t.me/c/1", published=dt.date(2026, 2, 28), origin="ch"),
        text_hash=text_hash(text),
    )


def done_check(store: CheckStore, text: str = POST, **fields: Unpack[_CheckFields]) -> CheckRow:
    row = new_check(store, text, **fields)
    store.reports.save(row.id, make_report())
    return row


def legacy_done_check(store: CheckStore) -> CheckRow:
    """A done check as the code before the four outcomes stored it (schema m001-m005):
    real / fake verdicts and decisions, no phase column."""
    row = new_check(store)
    report, report_json = serializable_report(make_report())
    legacy = {"true": "real", "false": "fake"}
    old_json = json.loads(report_json)
    old_json["verdict"] = legacy[old_json["verdict"]]
    for ruling in old_json["debate"]["rulings"]:
        ruling["decision"] = legacy.get(ruling["decision"], ruling["decision"])
    for key in ("basis", "lean", "triage"):
        del old_json[key]
    now = to_iso(dt.datetime.now(dt.UTC))
    rows = report_rows(row.id, report, json.dumps(old_json), now)
    rows["reports"][0]["verdict"] = legacy[report.verdict]
    for turn in rows["debate_turns"]:
        del turn["phase"]
        turn["decision"] = legacy.get(turn["decision"], turn["decision"])
    for table, table_rows in rows.items():
        store.db.table(table).insert_all(table_rows)
    store.db.execute(
        "UPDATE checks SET status = 'done', finished_at = ? WHERE id = ?", [now, row.id]
    )
    return row


def count(db: StoreDatabase, table: str, check_id: str) -> int:
    return int(
        first_row(db.execute(f"SELECT count(*) FROM {table} WHERE check_id = ?", [check_id]))[0]
    )


def dump(db: StoreDatabase) -> str:
    """Every row of every table, as text."""
    names = db.table_names()
    return "\n".join(repr(row) for name in names for row in db.execute(f'SELECT * FROM "{name}"'))


# -- schema and migrations -------------------------------------------------------------------


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
    from storage.settings import StorageSettings

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


# -- reports ---------------------------------------------------------------------------------


def test_a_report_round_trips_and_fills_every_table(store: CheckStore, db: StoreDatabase) -> None:
    row = new_check(store)
    store.checks.set_status(row.id, "running")
    report = make_report()
    store.reports.save(row.id, report, vector=np.arange(8, dtype=np.float32))

    assert store.reports.get(row.id) == report
    stored = store.checks.get(row.id)
    assert stored is not None and stored.status == "done"
    assert stored.started_at == stored.finished_at == T0
    summary = next(db.query("SELECT * FROM reports WHERE check_id = ?", [row.id]))
    assert summary["verdict"] == "true" and summary["confidence"] == 0.82
    assert (summary["n_evidence"], summary["n_claims"], summary["rounds"]) == (2, 3, 2)
    assert summary["llm_calls"] == 11 and summary["prompt_tokens"] == 3000
    assert summary["completion_tokens"] == 400
    assert {t: count(db, t, row.id) for t in ("evidence", "claims", "analyses", "llm_calls")} == {
        "evidence": 2,
        "claims": 3,
        "analyses": 4,
        "llm_calls": 11,
    }
    turns = list(db.query("SELECT * FROM debate_turns WHERE check_id = ? ORDER BY seq", [row.id]))
    assert [(t["seq"], t["round"], t["side"], t["decision"]) for t in turns] == [
        (1, 1, "pro", None),
        (2, 1, "con", None),
        (3, 1, "judge", "continue"),
        (4, 2, "pro", None),
        (5, 2, "con", None),
        (6, 2, "judge", "true"),
    ]
    assert turns[1]["text"] == "Weak.\n\nNo date." and turns[0]["cites_json"] == '["web-1"]'
    expert = next(db.query("SELECT * FROM analyses WHERE agent = 'expert'"))
    assert expert["dimension"] == "analysis" and "Consistent." in expert["text"]
    claim = next(db.query("SELECT * FROM claims WHERE claim_id = 'c0'"))
    assert claim["dropped_quotes"] == 1 and "web-1" in claim["quotes_json"]
    last_call = next(db.query("SELECT * FROM llm_calls ORDER BY seq DESC LIMIT 1"))
    assert (last_call["ok"], last_call["cached_tokens"], last_call["attempts"]) == (0, 128, 3)
    assert store.integrity_ok()


def test_fact_checks_and_image_findings_are_stored_as_evidence(
    store: CheckStore, db: StoreDatabase
) -> None:
    row = new_check(store)
    report = make_report()
    first = report.evidence[0]
    report.evidence += [
        first.model_copy(update={"id": "fc-1", "source": "factcheck", "rating": "False"}),
        first.model_copy(update={"id": "img-1-label", "source": "image", "url": ""}),
    ]
    store.reports.save(row.id, report)
    assert store.reports.get(row.id) == report
    sources = [r[0] for r in db.execute("SELECT source FROM evidence ORDER BY evidence_id")]
    assert sorted(sources) == ["factcheck", "image", "web", "wikipedia"]


def test_a_failed_save_writes_nothing(store: CheckStore, db: StoreDatabase) -> None:
    row = new_check(store)
    broken = make_report()
    broken.evidence.append(broken.evidence[0])  # two documents with one id
    with pytest.raises((sqlite3.IntegrityError, psycopg.IntegrityError)):
        store.reports.save(row.id, broken, vector=np.ones(4, dtype=np.float32))
    with pytest.raises(TypeError, match="float32"):
        store.reports.save(row.id, make_report(), vector=np.ones(4))  # type: ignore[arg-type]  # float64 on purpose
    with pytest.raises(ValueError, match="NaN"):
        store.reports.save(row.id, make_report(), vector=np.array([np.nan], dtype=np.float32))
    for table in ("reports", "evidence", "claims", "analyses", "debate_turns", "post_vectors"):
        assert count(db, table, row.id) == 0, table
    assert store.checks.get(row.id) == row  # still queued
    store.reports.save(row.id, make_report())
    with pytest.raises(StorageError, match="already has a report"):
        store.reports.save(row.id, make_report())
    with pytest.raises(CheckNotFoundError):
        store.reports.save("nope", make_report())


def test_statuses_stamp_their_times(store: CheckStore, clock: Clock) -> None:
    row = new_check(store)
    assert (row.status, row.started_at, row.finished_at) == ("queued", None, None)
    store.checks.set_status(row.id, "running")
    clock.advance(seconds=5)
    store.checks.set_status(row.id, "failed", error="the model timed out")
    failed = store.checks.get(row.id)
    assert failed is not None and failed.error == "the model timed out"
    assert (failed.started_at, failed.finished_at) == (T0, T0 + dt.timedelta(seconds=5))
    with pytest.raises(CheckNotFoundError):
        store.checks.set_status("nope", "done")
    with pytest.raises(ValueError):
        store.checks.set_status(row.id, "paused")  # type: ignore[arg-type]
    with pytest.raises(CheckNotFoundError):
        new_check(store, repeat_of="nope", repeat_kind="exact")
    with pytest.raises(ValueError, match="together"):
        new_check(store, repeat_of=row.id)


# -- repeats, queue, history, export ---------------------------------------------------------


def test_find_exact_returns_the_newest_original_in_the_window(
    store: CheckStore, clock: Clock
) -> None:
    digest = text_hash(POST)
    first = done_check(store)
    clock.advance(hours=1)
    repeat = new_check(store, status="done", repeat_of=first.id, repeat_kind="exact")
    store.reports.save(repeat.id, make_report())  # even with a report, a repeat is no original
    new_check(store)  # queued, not an answer yet
    assert store.checks.find_exact(digest, since=T0, **HERE) == store.checks.get(first.id)
    assert store.checks.find_exact(digest, since=T0 + dt.timedelta(minutes=1), **HERE) is None
    assert store.checks.find_exact(text_hash("another post"), since=T0, **HERE) is None
    clock.advance(hours=1)
    second = done_check(
        store, "  the MAYOR of springfield said the river bridge will close for all of 2027.  "
    )
    assert store.checks.find_exact(digest, since=T0, **HERE) == store.checks.get(second.id)
    store.purge(older_than=clock.advance(seconds=1))
    assert store.checks.find_exact(digest, since=T0, **HERE) is None
    with pytest.raises(ValueError, match="naive"):
        store.checks.find_exact(digest, since=dt.datetime(2026, 1, 1), **HERE)


def test_unfinished_and_history(store: CheckStore, clock: Clock) -> None:
    a = new_check(store)
    clock.advance(seconds=1)
    b = done_check(store, "b", platform="discord", chat="g1")
    clock.advance(seconds=1)
    c = new_check(store, "c")
    store.checks.set_status(c.id, "running")
    clock.advance(seconds=1)
    d = new_check(store, "d", chat="chat-2")
    store.checks.set_status(d.id, "cancelled")
    assert [row.id for row in store.checks.unfinished()] == [a.id, c.id]
    history = store.checks.history()
    assert [(row.id, verdict) for row, verdict in history] == [
        (d.id, None),
        (c.id, None),
        (b.id, "true"),
        (a.id, None),
    ]
    assert [row.id for row, _ in store.checks.history(limit=2)] == [d.id, c.id]
    assert [row.id for row, _ in store.checks.history(platform="discord")] == [b.id]
    assert [row.id for row, _ in store.checks.history(platform="telegram", chat="chat-1")] == [
        c.id,
        a.id,
    ]


def test_export_has_done_checks_with_hashes_only(store: CheckStore, db: StoreDatabase) -> None:
    secret = b"s" * 32
    who = hash_user(secret, "telegram", "123456789")
    kept = done_check(store, requester=who)
    new_check(store, "still queued", requester=who)
    old = done_check(store, "old one", requester=who)
    store.purge(older_than=T0 + dt.timedelta(seconds=1))  # both were made at T0
    rows = list(store.reports.export())
    assert [row["id"] for row in rows] == [kept.id, old.id]
    assert rows[0]["requester"] == who and rows[0]["verdict"] == "true"
    assert rows[0]["confidence"] == 0.82 and rows[0]["report"] is None  # purged
    assert set(rows[0]) == {
        "id", "platform", "chat", "requester", "created_at", "repeat_of", "repeat_kind",
        "verdict", "confidence", "report",
    }  # fmt: skip
    fresh = done_check(store, "fresh", requester=who)
    exported = {row["id"]: row for row in store.reports.export()}
    assert exported[fresh.id]["report"] == make_report().model_dump(mode="json")
    assert "123456789" not in repr(exported) and "123456789" not in dump(db)


# -- feedback, settings, limits --------------------------------------------------------------


def test_a_second_vote_replaces_the_first(store: CheckStore) -> None:
    row = done_check(store)
    store.feedback.add(row.id, "alice", 1)
    store.feedback.add(row.id, "bob", 1, "right")
    assert store.feedback.counts(row.id) == (2, 0)
    store.feedback.add(row.id, "alice", -1, "changed my mind")
    assert store.feedback.counts(row.id) == (1, 1)
    assert store.feedback.counts("other") == (0, 0)
    with pytest.raises(ValueError):
        store.feedback.add(row.id, "carol", 0)
    with pytest.raises(CheckNotFoundError):
        store.feedback.add("nope", "carol", 1)


def test_chat_settings_are_json_per_chat(store: CheckStore) -> None:
    assert store.chats.get("telegram", "1", "lang", "en") == "en"
    store.chats.set("telegram", "1", "lang", "uk")
    store.chats.set("telegram", "1", "limits", {"daily": 10, "roles": ["a", "ж"]})
    store.chats.set("telegram", "1", "lang", "pl")
    assert store.chats.get("telegram", "1", "lang") == "pl"
    assert store.chats.get("telegram", "1", "limits") == {"daily": 10, "roles": ["a", "ж"]}
    assert store.chats.get("telegram", "2", "lang") is None
    assert store.chats.get("discord", "1", "lang", "en") == "en"
    with pytest.raises(TypeError):
        store.chats.set("telegram", "1", "bad", object())


def test_a_section_is_claimed_once_until_its_claim_is_cleared(store: CheckStore) -> None:
    """The key of ``section_marks`` decides who posts a section: of many claims at once
    (threads here; replicas in tests/bots/telegram/test_telegram_queued.py), one wins."""
    row = done_check(store)
    won: list[bool] = []

    def claim(n: int) -> None:
        won.append(store.marks.claim(row.id, "debate", [n]))

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(won) == [False] * 7 + [True]
    claimed = store.marks.get(row.id, "debate")  # the winner's, untouched by the others
    assert isinstance(claimed, list) and len(claimed) == 1
    store.marks.set(row.id, "debate", [101, 102])  # posted: where
    assert not store.marks.claim(row.id, "debate", [])
    assert store.marks.get(row.id, "debate") == [101, 102]
    store.marks.set(row.id, "debate", None)  # the posting failed: a later tap tries again
    assert store.marks.claim(row.id, "debate", [])
    assert store.marks.claim(row.id, "claims", [])  # each section its own
    with pytest.raises(CheckNotFoundError):
        store.marks.claim("nope", "debate", [])


def test_request_counts_and_the_oldest_in_a_window(store: CheckStore, clock: Clock) -> None:
    new_check(store, requester="alice")
    clock.advance(seconds=30)
    new_check(store, requester="alice", chat="chat-2")
    new_check(store, requester="bob")
    clock.advance(seconds=30)
    done_check(store, requester="alice", platform="discord")
    minute_ago = clock.now - dt.timedelta(seconds=45)
    assert store.checks.count(since=T0) == 4
    assert store.checks.count(since=T0, requester="alice") == 3
    assert store.checks.count(since=minute_ago, requester="alice") == 2
    assert store.checks.count(since=T0, platform="telegram", chat="chat-1") == 2
    assert store.checks.count(since=T0, platform="discord") == 1
    assert store.checks.oldest(since=minute_ago, requester="alice") == T0 + dt.timedelta(seconds=30)
    assert store.checks.oldest(since=clock.advance(seconds=1)) is None


def test_the_days_charges_and_the_pending_runs_in_one_read_each(
    store: CheckStore, clock: Clock
) -> None:
    new_check(store, requester="alice", tokens=1000)  # before the window, still pending
    since = clock.advance(seconds=30)
    first = new_check(store, requester="alice", tokens=1000)
    other_chat = new_check(store, requester="alice", chat="chat-2", tokens=300)
    running = new_check(store, requester="bob", tokens=200)
    new_check(store, requester="bob", platform="discord", tokens=50)  # another platform's chat-1
    new_check(store, requester="carol", chat="chat-2")  # no charge
    new_check(store, requester="alice", repeat_of=first.id, repeat_kind="exact")  # a repeat
    scope = {"requester": "alice", "platform": "telegram", "chat": "chat-1"}
    each = (
        store.checks.tokens_since(since),
        store.checks.tokens_since(since, requester="alice"),
        store.checks.tokens_since(since, platform="telegram", chat="chat-1"),
    )
    assert store.checks.day_charges(since, **scope) == each == (1550, 1300, 1200)
    nobody = {"requester": "dave", "platform": "telegram", "chat": "chat-9"}
    assert store.checks.day_charges(since, **nobody) == (1550, 0, 0)
    assert store.checks.pending_of(**scope) == (3, 3)
    store.checks.set_status(first.id, "done")
    store.checks.set_status(other_chat.id, "failed")
    store.checks.set_status(running.id, "running")
    assert store.checks.pending_of(**scope) == (1, 2)
    assert store.checks.pending_of(**nobody) == (0, 0)
    if not is_postgres(store.db):  # the day's window is read by its index, not a scan
        plan = store.db.execute(
            "EXPLAIN QUERY PLAN SELECT sum(c.tokens) FROM checks c WHERE c.created_at >= ?",
            [to_iso(since)],
        ).fetchall()
        assert "idx_checks_created" in plan[0][-1]


# -- vectors and retention -------------------------------------------------------------------


def test_vectors_of_answerable_checks_round_trip(store: CheckStore, clock: Clock) -> None:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((3, 384)).astype(np.float32)
    ids = []
    for i, vector in enumerate(vectors):
        row = new_check(store, f"post {i}")
        store.reports.save(row.id, make_report(), vector=vector)
        ids.append(row.id)
        clock.advance(minutes=1)
    repeat = new_check(store, "post 0", status="done", repeat_of=ids[0], repeat_kind="near")
    store.reports.save(repeat.id, make_report(), vector=vectors[0])
    got_ids, matrix = store.vectors.load()
    assert got_ids == ids and matrix.dtype == np.float32 and matrix.shape == (3, 384)
    np.testing.assert_array_equal(matrix, vectors)
    got_ids, matrix = store.vectors.load(since=T0 + dt.timedelta(seconds=30))
    assert got_ids == ids[1:]
    np.testing.assert_array_equal(matrix, vectors[1:])
    # After an encoder change only the newest dimension is comparable.
    store.reports.save(new_check(store, "new encoder").id, make_report(), vector=vectors[0, :16])
    got_ids, matrix = store.vectors.load()
    assert len(got_ids) == 1 and matrix.shape == (1, 16)
    big_endian = new_check(store, "big endian")
    store.reports.save(big_endian.id, make_report(), vector=vectors[1, :16].astype(">f4"))
    np.testing.assert_array_equal(store.vectors.load()[1][-1], vectors[1, :16])


def test_vectors_are_loaded_in_batches_beside_the_matrix_only(
    store: CheckStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What :meth:`Vectors.load` holds besides the matrix is one batch of rows, not every
    stored vector a second time (50k vectors: 80 MB, not 162)."""
    monkeypatch.setattr(vectors_module, "LOAD_BATCH", 16)
    vectors = np.random.default_rng(1).standard_normal((256, 384)).astype(np.float32)
    ids = []
    for i, vector in enumerate(vectors):
        row = new_check(store, f"post {i}")
        store.reports.save(row.id, Report(verdict="true"), vector=vector)
        ids.append(row.id)
    tracemalloc.start()
    try:
        got_ids, matrix = store.vectors.load()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got_ids == ids
    np.testing.assert_array_equal(matrix, vectors)
    # The matrix, and at most a few batches' blobs; not all of them again.
    assert peak < matrix.nbytes * 1.5, (peak, matrix.nbytes)  # all again: over 2x


def test_purge_keeps_the_verdict_and_removes_the_text(
    store: CheckStore, db: StoreDatabase, tmp_path: Path, clock: Clock
) -> None:
    marker = "Xylophone-marker-7731 " * 300  # long enough to overflow into its own pages
    # Everything a post brings that could name someone: the text, who forwarded it (a
    # name, an @username), its link (a private invite), a summary restating it.
    post = Post(
        text=POST + marker,
        url="https://t.me/+Xylophone-invite",
        origin="user Xylophone Smith (@xylophone_smith)",
    )
    old = store.checks.create(
        platform="telegram", chat="chat-1", requester="u-hash", post=post, text_hash="Xylohash"
    )
    store.reports.save(
        old.id,
        make_report(marker=marker, summary=f"Xylophone Smith says {marker}"),
        vector=np.ones(8, dtype=np.float32),
    )
    failed = new_check(store, "another post", chat="chat-2")
    store.checks.set_status(failed.id, "failed", error="Xylophone error text")
    store.feedback.add(old.id, "alice", 1, f"exactly: {marker}")
    store.marks.set(old.id, "debate", [101, 102])
    store.chats.set("telegram", "chat-2", "language", "Xylophonian")  # a quiet chat
    clock.advance(days=31)
    store.chats.set("telegram", "chat-3", "language", "French")  # an active one
    recent = done_check(store, "a recent post")

    assert store.purge(older_than=clock.now - dt.timedelta(days=30)) == 2
    assert store.purge(older_than=clock.now - dt.timedelta(days=30)) == 0
    purged = store.checks.get(old.id)
    assert purged is not None and purged.post_text is None and purged.post is None
    assert purged.status == "done" and purged.chat == "chat-1"
    assert (purged.text_hash, purged.origin, purged.url) == ("", "", "")
    assert store.reports.get(old.id) is None and store.reports.get(recent.id) == make_report()
    summary = next(db.query("SELECT * FROM reports WHERE check_id = ?", [old.id]))
    assert (summary["verdict"], summary["confidence"], summary["n_claims"]) == ("true", 0.82, 3)
    assert summary["summary"] == ""
    labels = [r["label"] for r in db.query("SELECT label FROM claims WHERE check_id = ?", [old.id])]
    assert labels == ["supports", "supports", "not enough information"]
    assert count(db, "llm_calls", old.id) == 11 and count(db, "evidence", old.id) == 0
    assert count(db, "post_vectors", old.id) == 0 and store.feedback.counts(old.id) == (1, 0)
    assert store.marks.get(old.id, "debate") is None
    assert store.chats.get("telegram", "chat-2", "language") is None
    assert store.chats.get("telegram", "chat-3", "language") == "French"
    assert store.vectors.load()[0] == []
    assert "Xylo" not in dump(db) and "Springfield said" not in dump(db)
    assert "a recent post" in dump(db)
    assert store.integrity_ok()
    if is_postgres(db):  # the server's files are its own; its rows are checked above
        return
    db.close()
    for file in tmp_path.iterdir():  # the database, and what is left of the WAL
        assert b"Xylo" not in file.read_bytes(), file.name


# -- awkward input ---------------------------------------------------------------------------


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


def test_times_are_stored_as_utc(db: StoreDatabase) -> None:
    kyiv = dt.timezone(dt.timedelta(hours=2))
    store = CheckStore(db, clock=lambda: dt.datetime(2026, 3, 1, 14, 0, tzinfo=kyiv))
    row = new_check(store)
    assert row.created_at == T0 and row.created_at.tzinfo == dt.UTC
    raw = first_row(db.execute("SELECT created_at FROM checks"))[0]
    assert raw == "2026-03-01T12:00:00.000000+00:00"
    naive = CheckStore(db, clock=lambda: dt.datetime(2026, 3, 1))
    with pytest.raises(ValueError, match="naive"):
        new_check(naive)


def test_reads_wait_for_the_stores_lock_on_sqlite_only(
    store: CheckStore, db: StoreDatabase
) -> None:
    """One SQLite connection is never used by two threads at once; PostgreSQL's connection
    runs one statement at a time by itself, and its reads do not wait for the lock."""
    row = new_check(store)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.database.lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    found: list[CheckRow | None] = []
    reader = threading.Thread(target=lambda: found.append(store.checks.get(row.id)))
    reader.start()
    reader.join(0.5)
    waited = reader.is_alive()
    release.set()
    reader.join(10)
    holder.join(10)
    assert waited is not is_postgres(db)
    assert found == [row]


@pytest.mark.slow
def test_a_read_waiting_for_a_lost_postgres_connection_keeps_no_one_waiting(
    postgres_server: PostgresServer, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = open_postgres(postgres_url)
    store = CheckStore(db)
    row = new_check(store)
    monkeypatch.setattr(postgres_module, "RECONNECT_S", 20.0)
    name = sql.Identifier(postgres_url.rpartition("/")[2])
    with psycopg.connect(postgres_server.url, autocommit=True) as admin:  # turns away new ones
        admin.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS false").format(name))
    db.current().close()  # the connection is lost; the server does not let it back yet
    failed: list[BaseException] = []

    def read() -> None:
        try:
            store.checks.get(row.id)
        except BaseException as exc:
            failed.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.3)  # the reader waits for the server to come back
    assert reader.is_alive()
    # Meanwhile the store's lock is free, and the store closes at once ...
    assert store.database.lock.acquire(timeout=1)
    store.database.lock.release()
    store.close()
    # ... and the waiting read gives up, instead of using a closed store: it fails as a
    # closed connection fails (InterfaceError), not as a reconnection that timed out
    # (OperationalError), which a close waiting for the reader would have meant.
    reader.join(5)
    assert not reader.is_alive()
    assert [type(exc) for exc in failed] == [psycopg.InterfaceError]


def test_threads_share_one_store(db: StoreDatabase) -> None:
    store = CheckStore(db)

    def work(n: int) -> None:
        for i in range(20):
            row = new_check(store, f"post {n} {i}")
            store.reports.save(row.id, make_report())

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.checks.count(since=T0 - dt.timedelta(days=3650)) == 80
    assert len(list(store.reports.export())) == 80 and store.integrity_ok()
