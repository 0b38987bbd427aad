"""Post vectors and retention on both engines: the vectors of answerable checks, loaded
in batches, and the purge that keeps the verdict and removes the text."""

from __future__ import annotations

import datetime as dt
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from tests.peers.fixtures.store_fixtures import T0, Clock
from tests.storage.stored import POST, count, done_check, dump, make_report, new_check

import storage.vectors as vectors_module
from storage import CheckStore
from storage.postgres import StoreDatabase, is_postgres
from zofia_engine.post import Post
from zofia_engine.report import Report


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
    store.checks.set_status(failed.id, "running")
    early = make_report(marker=marker).model_copy(update={"complete": False})
    store.reports.save_early(failed.id, early)  # a verdict shown before it failed
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
    assert store.reports.early(failed.id) is None
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
