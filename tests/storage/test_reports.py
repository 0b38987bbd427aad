"""Reports in and out of the store on both engines: a report round trip that fills every
table, its evidence, a failed save that writes nothing, and the times a status stamps."""

from __future__ import annotations

import datetime as dt
import sqlite3

import numpy as np
import psycopg
import pytest

from tests.peers.fixtures.store_fixtures import T0, Clock
from tests.storage.stored import count, make_report, new_check

from storage import CheckNotFoundError, CheckStore, StorageError
from storage.postgres import StoreDatabase


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


def test_an_early_report_is_kept_while_the_check_runs_then_dropped(store: CheckStore) -> None:
    row = new_check(store)
    assert store.reports.early(row.id) is None
    early = make_report().model_copy(update={"complete": False})
    store.reports.save_early(row.id, early)
    store.reports.save_early(row.id, early)  # again: replaced, not doubled
    assert store.reports.early(row.id) == early
    store.reports.save(row.id, make_report())
    store.reports.drop_early(row.id)
    assert store.reports.early(row.id) is None and store.reports.get(row.id) == make_report()
    with pytest.raises(CheckNotFoundError):
        store.reports.save_early("no-such-check", early)
