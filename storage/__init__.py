"""The store of checks and reports (SQLite or PostgreSQL), and only the store.

``open_database`` opens and migrates the file; ``CheckStore`` holds its parts over
one database (``store.checks``, ``store.reports``, ``store.vectors``,
``store.feedback``, ``store.chats``, ``store.marks``, ``store.deliveries``,
``store.reviews``, ``store.attempts``, ``store.shown_cards``), with ``store.write()``
for one transaction across them; the API's keys are :mod:`storage.api_keys`. User ids,
chat ids and the keys of texts are stored only as HMACs (:mod:`storage.keys`). The check
service built on it (:mod:`bots.service`) sits above; nothing here imports it, or
anything of ``bots``.
"""

from __future__ import annotations

from .database import default_database_path, load_or_create_secret, open_database
from .errors import CheckNotFoundError, StorageError
from .keys import hash_chat, hash_user, keyed_text_hash, new_check_id, storable_text, text_hash
from .request_counts import RequestScope
from .rows import CheckRow, CheckStatus, RepeatKind
from .schema import MIGRATIONS, applied_migrations, migrate
from .store import CheckStore

__all__ = [
    "MIGRATIONS",
    "CheckNotFoundError",
    "CheckRow",
    "CheckStatus",
    "CheckStore",
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
