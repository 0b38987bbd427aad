"""Open the store the settings name, with its user-id secret."""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlite_utils import Database

from .database import default_database_path, load_or_create_secret, open_database
from .migrations import MIGRATIONS, applied_migrations
from .settings import StorageSettings
from .store import CheckStore

__all__ = ["StoreStatus", "open_store", "store_status"]


def open_store(
    settings: StorageSettings, *, clock: Callable[[], dt.datetime] | None = None
) -> tuple[CheckStore, bytes]:
    """The store at ``settings.path`` (the user data directory by default), migrated,
    and the HMAC secret for user ids. ``clock`` is for tests that move time."""
    path = Path(settings.path).expanduser() if settings.path else default_database_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    secret = load_or_create_secret(settings, path)
    return CheckStore(open_database(path, secret=secret), clock=clock), secret


@dataclass(frozen=True)
class StoreStatus:
    """Where the store is and what state it is in, for ``zofia doctor``."""

    path: Path
    schema: str
    pending: tuple[str, ...]
    free_bytes: int
    tokens_today: int


def store_status(settings: StorageSettings) -> StoreStatus:
    """The store's file, its newest applied migration, those still pending (applied on
    the next open) and the free space beside it. Reads only; creates nothing but the
    data directory.

    Raises:
        sqlite3.Error: the file exists but is not a database.
    """
    path = Path(settings.path).expanduser() if settings.path else default_database_path()
    applied: list[str] = []
    tokens = 0
    if path.is_file():
        db = Database(sqlite3.connect(f"file:{path}?mode=ro", uri=True))
        try:
            applied = applied_migrations(db)
            if "reports" in db.table_names():
                midnight = dt.datetime.now(dt.UTC).replace(hour=0, minute=0, second=0)
                tokens = CheckStore(db).tokens_since(midnight)
        finally:
            db.close()
    known = [name for name, _ in MIGRATIONS]
    pending = tuple(name for name in known if name not in applied)
    free = shutil.disk_usage(path.parent if path.parent.exists() else Path.cwd()).free
    return StoreStatus(path, applied[-1] if applied else "(new)", pending, free, tokens)
