"""``store.media_readings`` on each engine: what was read from a check's images and heard
in its voice note, kept with the check (never without one), read back as it was kept,
and purged with the post's text; an older store's heard voice notes move into it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from sqlite_utils import Database

from tests.factories import full_report
from tests.peers.fixtures.store_fixtures import Clock
from tests.storage.stored import new_check

from storage import migrate, open_database
from storage.errors import CheckNotFoundError
from storage.media_readings import MediaReading
from storage.store import CheckStore
from zofia_engine.records.audio import Transcript

HEARD = Transcript(
    sha256="ab" * 32,
    bytes=11_204,
    format="ogg",
    duration_s=5.3,
    text="The mayor of Springfield signed a law banning cars on Sundays.",
    language="en",
    transcriber="openai:whisper-1",
    ms=812.0,
)
# An image's finding as the reader makes it (its text, confidence, stamp-like words and
# notes), with a second one that had no text; a character outside ASCII in each.
READ = full_report().images[0]
FINDINGS = (
    READ.model_copy(update={"text": f"{READ.text}\nSão Paulo ✅"}),
    READ.model_copy(update={"index": 2, "text": "", "ocr_confidence": None, "labels": []}),
)


def test_what_was_read_and_heard_is_kept_with_its_check_and_read_back(
    store: CheckStore,
) -> None:
    pictures, voice, both = (new_check(store, f"Post {n}.") for n in range(3))
    other = new_check(store, "Another post.")
    kept = {
        pictures.id: MediaReading(findings=FINDINGS, caption=False),
        voice.id: MediaReading(heard=HEARD, caption=False),
        both.id: MediaReading(FINDINGS[:1], HEARD, caption=True),
    }
    for check_id, reading in kept.items():
        store.media_readings.keep(check_id, reading)
    assert {c: store.media_readings.get(c) for c in kept} == kept
    assert store.media_readings.get(other.id) is None
    with pytest.raises(CheckNotFoundError):
        store.media_readings.keep("no-such-check", MediaReading(FINDINGS))


def test_the_purge_takes_what_was_read_with_the_text(store: CheckStore, clock: Clock) -> None:
    row = new_check(store)
    store.media_readings.keep(row.id, MediaReading(FINDINGS, HEARD))
    clock.advance(days=31)
    assert store.purge(older_than=clock.now - dt.timedelta(days=30)) == 1
    assert store.media_readings.get(row.id) is None
    assert store.purge(older_than=clock.now - dt.timedelta(days=30)) == 0


def test_an_older_stores_heard_voice_notes_move_to_media_readings(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = Database(path)
    migrate(old, upto="m022_heard_notes")
    row = new_check(CheckStore(old))
    old.execute(
        "INSERT INTO heard_notes (check_id, transcript_json, caption) VALUES (?, ?, 0)",
        [row.id, HEARD.model_dump_json()],
    )
    old.conn.commit()
    old.close()
    db = open_database(path)
    assert "heard_notes" not in db.table_names()
    reading = CheckStore(db).media_readings.get(row.id)
    db.close()
    assert reading == MediaReading(findings=(), heard=HEARD, caption=False)
