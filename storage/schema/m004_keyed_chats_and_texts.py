"""Migration m004: chat ids and the keys of texts become HMACs, as user ids already were.

Why: a private chat's id on Telegram is its user's id, and a Discord DM's chat was
named after its channel; an unsalted SHA-256 of a text lets anyone test whether it was
ever checked. Every stored chat (checks and chat settings) becomes
:func:`~storage.keys.hash_chat` of what was stored, and every text key
:func:`~storage.keys.rekey_text_hash` of the plain digest. It needs the store's secret
when there are rows to rewrite. A PostgreSQL store starts after this step (it is empty
here), so only SQLite rows are ever rewritten.
"""

from __future__ import annotations

from sqlite_utils import Database

from ..errors import StorageError
from ..keys import hash_chat, rekey_text_hash
from ..sql import StoreDatabase, first_row

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    """Rewrite the stored chats and text keys with ``secret``.

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
