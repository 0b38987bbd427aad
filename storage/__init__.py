"""The store of checks and reports (SQLite or PostgreSQL), and the check service on it.

``open_database`` opens and migrates the file; ``CheckStore`` holds its parts over
one database (``store.checks``, ``store.reports``, ``store.vectors``,
``store.feedback``, ``store.chats``, ``store.marks``, ``store.deliveries``), with
``store.write()`` for one transaction across them; user ids, chat ids and the keys
of texts are stored only as HMACs (:mod:`storage.keys`). The check service that the
CLI and the bots share, built on the store and the engine's ports, is
:class:`storage.service.CheckService`; on PostgreSQL it consults a
:class:`~storage.queue.service.QueuedDelivery` (checks run on workers).
"""

from __future__ import annotations

from .database import default_database_path, load_or_create_secret, open_database
from .errors import CheckNotFoundError, StorageError
from .keys import hash_chat, hash_user, keyed_text_hash, new_check_id, storable_text, text_hash
from .migrations import MIGRATIONS, applied_migrations, migrate
from .rows import CheckRow, CheckStatus, RepeatKind
from .store import CheckStore

__all__ = [
    "MIGRATIONS",
    "CheckNotFoundError",
    "CheckRow",
    "CheckStatus",
    "CheckStore",
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
