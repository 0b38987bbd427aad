"""What the retention purge deletes, and what it keeps, in one place.

After ``storage.retention_days`` everything that can name someone or restate the post
goes: its text, where it was forwarded from, its link, the key that finds its repeats,
what was read from its images and heard in its voice note, any error text, the
evidence, the report's JSON and summary, claim texts and reasons, analysis and debate
texts, the post vector, the bots' section marks, where a card was to be delivered, where
a card was shown (the chat and message ids a correction would go to), feedback comments,
the notes and links of the check's reviews, and the settings of chats quiet for as
long. The record stays for statistics: the check's id, platform, keyed chat and
requester, times, status and reply language; the verdict, confidence, counts, claim
labels, votes and the model-call accounting; and each review's row (who as a keyed
hash, when, from which verdict to which, for which keyed chat).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from .locked import LockedDatabase
from .rows import to_iso
from .sql import StoreDatabase

__all__ = ["PURGE_BATCH", "purge_content"]

#: checks purged per transaction: each is short, and the write lock is free between
PURGE_BATCH = 500

_HAS_CONTENT = """
    c.post_text IS NOT NULL OR c.origin != '' OR c.url != '' OR c.error != '' OR c.text_hash != ''
    OR EXISTS (SELECT 1 FROM reports WHERE check_id = c.id
               AND (summary != '' OR report_json IS NOT NULL))
    OR EXISTS (SELECT 1 FROM section_marks WHERE check_id = c.id)
    OR EXISTS (SELECT 1 FROM evidence WHERE check_id = c.id)
    OR EXISTS (SELECT 1 FROM post_vectors WHERE check_id = c.id)
    OR EXISTS (SELECT 1 FROM early_reports WHERE check_id = c.id)
    OR EXISTS (SELECT 1 FROM media_readings WHERE check_id = c.id)
    OR EXISTS (SELECT 1 FROM deliveries WHERE check_id = c.id)
    OR EXISTS (SELECT 1 FROM shown_cards WHERE check_id = c.id)
    OR EXISTS (SELECT 1 FROM claims WHERE check_id = c.id
               AND (text IS NOT NULL OR reason IS NOT NULL OR quotes_json IS NOT NULL))
    OR EXISTS (SELECT 1 FROM analyses WHERE check_id = c.id AND text IS NOT NULL)
    OR EXISTS (SELECT 1 FROM debate_turns WHERE check_id = c.id AND text IS NOT NULL)
    OR EXISTS (SELECT 1 FROM feedback WHERE check_id = c.id AND comment != '')
    OR EXISTS (SELECT 1 FROM reviews WHERE check_id = c.id AND (note != '' OR link != ''))
"""
# The next batch of checks with something left to purge, in id order after ``:after``.
_NEXT_BATCH = f"""
    SELECT c.id FROM checks c WHERE c.created_at < :cutoff AND c.id > :after
    AND ({_HAS_CONTENT}) ORDER BY c.id LIMIT :batch
"""
# Each statement touches only what still holds something: a row purged before is not
# written again (on PostgreSQL an update writes a new row version, even an identical one).
_PURGE_STATEMENTS = [
    "UPDATE checks SET post_text = NULL, origin = '', url = '', error = '', text_hash = ''"
    " WHERE id IN ({ids}) AND (post_text IS NOT NULL OR origin != '' OR url != ''"
    " OR error != '' OR text_hash != '')",
    "UPDATE reports SET report_json = NULL, summary = '' WHERE check_id IN ({ids})"
    " AND (report_json IS NOT NULL OR summary != '')",
    "DELETE FROM section_marks WHERE check_id IN ({ids})",
    "DELETE FROM evidence WHERE check_id IN ({ids})",
    "DELETE FROM post_vectors WHERE check_id IN ({ids})",
    "DELETE FROM early_reports WHERE check_id IN ({ids})",
    "DELETE FROM media_readings WHERE check_id IN ({ids})",
    "DELETE FROM deliveries WHERE check_id IN ({ids})",
    "DELETE FROM shown_cards WHERE check_id IN ({ids})",
    "UPDATE claims SET text = NULL, reason = NULL, quotes_json = NULL WHERE check_id IN ({ids})"
    " AND (text IS NOT NULL OR reason IS NOT NULL OR quotes_json IS NOT NULL)",
    "UPDATE analyses SET text = NULL WHERE check_id IN ({ids}) AND text IS NOT NULL",
    "UPDATE debate_turns SET text = NULL WHERE check_id IN ({ids}) AND text IS NOT NULL",
    "UPDATE feedback SET comment = '' WHERE check_id IN ({ids}) AND comment != ''",
    # The one change the reviews' append-only trigger lets through (m015).
    "UPDATE reviews SET note = '', link = '' WHERE check_id IN ({ids})"
    " AND (note != '' OR link != '')",
]
# A chat's settings go once the chat has been quiet for the whole retention.
_QUIET_CHATS = """
    DELETE FROM chat_settings WHERE (platform, chat, key) IN (
        SELECT platform, chat, key FROM chat_settings s WHERE s.updated_at < :cutoff
        AND NOT EXISTS (SELECT 1 FROM checks c WHERE c.platform = s.platform
                        AND c.chat = s.chat AND c.created_at >= :cutoff)
        LIMIT :batch)
"""


def purge_content(db: LockedDatabase, older_than: dt.datetime, *, batch: int = PURGE_BATCH) -> int:
    """Purge the checks created before ``older_than`` (see the module's docstring) that
    still hold something to purge, ``batch`` at a time: each batch is found by a read,
    then purged in a write transaction of its own, so the store's lock and the write
    lock are free between batches. Then, on SQLite, checkpoint and truncate the WAL, so
    that with ``secure_delete`` the text is gone from the files too (PostgreSQL's
    autovacuum reclaims the dead rows in its own time). A purge run again writes
    nothing: every statement passes over what is purged already.

    Returns:
        How many checks had something to remove.

    Raises:
        ValueError: ``older_than`` is naive.
    """
    cutoff = to_iso(older_than)
    purged, after = 0, ""
    while True:
        # Found by a read: the write lock is held only to purge them.
        found = db.rows(_NEXT_BATCH, {"cutoff": cutoff, "after": after, "batch": batch})
        ids = [row[0] for row in found]
        if ids:
            with db.write():
                _purge_batch(db.raw, ids)
        purged += len(ids)
        if len(ids) < batch:
            break
        after = ids[-1]
    while True:
        with db.write():
            deleted = db.execute(_QUIET_CHATS, {"cutoff": cutoff, "batch": batch}).rowcount
        if deleted < batch:
            break
    if purged and not db.is_postgres:
        with db.lock:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return purged


def _purge_batch(db: StoreDatabase, ids: list[Any]) -> None:
    marks = ", ".join(f":id{n}" for n in range(len(ids)))
    params = {f"id{n}": check_id for n, check_id in enumerate(ids)}
    for statement in _PURGE_STATEMENTS:
        db.execute(statement.format(ids=marks), params)
