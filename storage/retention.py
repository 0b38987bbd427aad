"""What the retention purge deletes, and what it keeps, in one place.

After ``storage.retention_days`` everything that can name someone or restate the
post goes: its text, where it was forwarded from, its link, the key that finds its
repeats, any error text, the evidence, the report's JSON and summary, claim texts
and reasons, analysis and debate texts, the post vector, the bots' section marks,
where a card was to be delivered, feedback comments, and the settings of chats quiet
for as long. The record stays
for statistics: the check's id, platform, keyed chat and requester, times, status
and reply language; the verdict, confidence, counts, claim labels, votes and the
model-call accounting.
"""

from __future__ import annotations

import datetime as dt

from .postgres import is_postgres
from .rows import to_iso
from .sql import StoreDatabase, first_row
from .transaction import write_transaction

__all__ = ["purge_content"]

_HAS_CONTENT = """
    c.post_text IS NOT NULL OR c.origin != '' OR c.url != '' OR c.error != '' OR c.text_hash != ''
    OR EXISTS (SELECT 1 FROM reports WHERE check_id = c.id AND summary != '')
    OR EXISTS (SELECT 1 FROM section_marks WHERE check_id = c.id)
    OR EXISTS (SELECT 1 FROM reports WHERE check_id = c.id AND report_json IS NOT NULL)
    OR EXISTS (SELECT 1 FROM evidence WHERE check_id = c.id)
    OR EXISTS (SELECT 1 FROM post_vectors WHERE check_id = c.id)
    OR EXISTS (SELECT 1 FROM deliveries WHERE check_id = c.id)
    OR EXISTS (SELECT 1 FROM claims WHERE check_id = c.id
               AND (text IS NOT NULL OR reason IS NOT NULL OR quotes_json IS NOT NULL))
    OR EXISTS (SELECT 1 FROM analyses WHERE check_id = c.id AND text IS NOT NULL)
    OR EXISTS (SELECT 1 FROM debate_turns WHERE check_id = c.id AND text IS NOT NULL)
    OR EXISTS (SELECT 1 FROM feedback WHERE check_id = c.id AND comment != '')
"""
_OLD = "check_id IN (SELECT id FROM checks WHERE created_at < :cutoff)"
_PURGE_STATEMENTS = [
    "UPDATE checks SET post_text = NULL, origin = '', url = '', error = '', text_hash = ''"
    " WHERE created_at < :cutoff",
    f"UPDATE reports SET report_json = NULL, summary = '' WHERE {_OLD}",
    f"DELETE FROM section_marks WHERE {_OLD}",
    # A chat's settings go once the chat has been quiet for the whole retention.
    "DELETE FROM chat_settings WHERE updated_at < :cutoff AND NOT EXISTS"
    " (SELECT 1 FROM checks c WHERE c.platform = chat_settings.platform"
    " AND c.chat = chat_settings.chat AND c.created_at >= :cutoff)",
    f"DELETE FROM evidence WHERE {_OLD}",
    f"DELETE FROM post_vectors WHERE {_OLD}",
    f"DELETE FROM deliveries WHERE {_OLD}",
    f"UPDATE claims SET text = NULL, reason = NULL, quotes_json = NULL WHERE {_OLD}",
    f"UPDATE analyses SET text = NULL WHERE {_OLD} AND text IS NOT NULL",
    f"UPDATE debate_turns SET text = NULL WHERE {_OLD} AND text IS NOT NULL",
    f"UPDATE feedback SET comment = '' WHERE {_OLD} AND comment != ''",
]


def purge_content(db: StoreDatabase, older_than: dt.datetime) -> int:
    """Purge the checks created before ``older_than`` (see the module's docstring), in
    one transaction; then, on SQLite, checkpoint and truncate the WAL, so that with
    ``secure_delete`` the text is gone from the files too (PostgreSQL's autovacuum
    reclaims the dead rows in its own time).

    Returns:
        How many checks had something to remove.

    Raises:
        ValueError: ``older_than`` is naive.
    """
    params = {"cutoff": to_iso(older_than)}
    with write_transaction(db):
        (purged,) = first_row(
            db.execute(
                f"SELECT count(*) FROM checks c WHERE c.created_at < :cutoff AND ({_HAS_CONTENT})",
                params,
            )
        )
        for statement in _PURGE_STATEMENTS:
            db.execute(statement, params)
    if purged and not is_postgres(db):
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return int(purged)
