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
from .postgres import PostgresDatabase
from .schema import MIGRATIONS, applied_migrations, migrate
from .settings import StorageSettings
from .sql import StoreDatabase
from .store import CheckStore

__all__ = ["StoreStatus", "open_postgres", "open_store", "store_status"]


def open_store(
    settings: StorageSettings, *, clock: Callable[[], dt.datetime] | None = None
) -> tuple[CheckStore, bytes]:
    """The store the settings name (SQLite in the user data directory by default, or
    PostgreSQL), migrated, and the HMAC secret for user ids. ``clock`` is for tests
    that move time.

    Raises:
        psycopg.OperationalError: the PostgreSQL server cannot be reached.
    """
    if settings.is_postgres:
        secret = settings.secret.encode("utf-8")
        db = open_postgres(settings.url, secret=secret)
        return CheckStore(db, clock=clock, secret=secret), secret
    path = _sqlite_path(settings)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    secret = load_or_create_secret(settings, path)
    return CheckStore(open_database(path, secret=secret), clock=clock, secret=secret), secret


def open_postgres(url: str, *, secret: bytes | None = None) -> PostgresDatabase:
    """Connect to the PostgreSQL at ``url`` and bring the store's schema up to date."""
    db = PostgresDatabase(url)
    try:
        migrate(db, secret=secret)
    except BaseException:
        db.close()
        raise
    return db


def _sqlite_path(settings: StorageSettings) -> Path:
    where = settings.sqlite_path
    return Path(where).expanduser() if where else default_database_path()


@dataclass(frozen=True)
class StoreStatus:
    """Where the store is and what state it is in, for ``zofia doctor``."""

    path: Path | str
    schema: str
    pending: tuple[str, ...]
    free_bytes: int
    tokens_today: int


def store_status(settings: StorageSettings) -> StoreStatus:
    """The store's file (or server, without its password), its newest applied migration,
    those still pending (applied on the next open) and the free space beside it (0 for
    a server). Reads only; creates nothing but the data directory.

    Raises:
        sqlite3.Error: the file exists but is not a database.
        psycopg.OperationalError: the PostgreSQL server cannot be reached.
    """
    if settings.is_postgres:
        pg = PostgresDatabase(settings.url)
        try:
            applied, tokens = _read_status(pg)
        finally:
            pg.close()
        where = pg.url.rsplit("@", 1)[-1]
        return StoreStatus(f"PostgreSQL {where}", *_schema(applied), 0, tokens)
    path = _sqlite_path(settings)
    applied, tokens = [], 0
    if path.is_file():
        db = Database(sqlite3.connect(f"file:{path}?mode=ro", uri=True))
        try:
            applied, tokens = _read_status(db)
        finally:
            db.close()
    free = shutil.disk_usage(path.parent if path.parent.exists() else Path.cwd()).free
    return StoreStatus(path, *_schema(applied), free, tokens)


def _read_status(db: StoreDatabase) -> tuple[list[str], int]:
    applied = applied_migrations(db)
    tokens = 0
    if "attempts" in db.table_names():  # m010 counts each check's tokens
        midnight = dt.datetime.now(dt.UTC).replace(hour=0, minute=0, second=0)
        tokens = CheckStore(db).checks.tokens_since(midnight)
    return applied, tokens


def _schema(applied: list[str]) -> tuple[str, tuple[str, ...]]:
    known = [name for name, _ in MIGRATIONS]
    pending = tuple(name for name in known if name not in applied)
    return (applied[-1] if applied else "(new)", pending)
