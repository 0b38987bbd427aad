"""SQLite storage of checks and reports.

``open_database`` opens and migrates the file; ``CheckStore`` reads and
writes checks, reports, feedback and chat settings; user ids are stored only
as ``hash_user`` HMACs. The check service that the CLI and the bots share,
built on the store and the engine, is :class:`storage.service.CheckService`.
"""

from __future__ import annotations

from .database import (
    clean_text,
    default_database_path,
    hash_user,
    load_or_create_secret,
    new_check_id,
    open_database,
    text_hash,
)
from .errors import CheckNotFoundError, StorageError
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
    "clean_text",
    "default_database_path",
    "hash_user",
    "load_or_create_secret",
    "migrate",
    "new_check_id",
    "open_database",
    "text_hash",
]
