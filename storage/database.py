"""Opening the database, and the secret that keys every stored identity.

The secret lives outside the database (the setting, else a ``0600`` file next to
it); :mod:`storage.keys` turns user ids, chat ids and texts into HMACs with it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import time
from pathlib import Path

import platformdirs
from sqlite_utils import Database

from .errors import StorageError
from .schema import migrate
from .settings import StorageSettings

__all__ = ["default_database_path", "load_or_create_secret", "open_database"]

MEMORY = ":memory:"
_SECRET_BYTES = 32


def open_database(path: str | Path, *, secret: bytes | None = None) -> Database:
    """Open (creating if needed) the database and bring its schema up to date.

    A new file is created readable by its owner only (``0600``); SQLite gives its WAL
    and shared-memory files the same mode.

    Sets WAL journaling (files only), foreign keys, a 5 s busy timeout,
    ``synchronous=NORMAL`` and ``secure_delete`` (purged text is overwritten
    in the file, not just unlinked). The connection may be used from several
    threads, one at a time (:class:`~storage.store.CheckStore` serialises).

    Args:
        path: a file path, or ``":memory:"`` for a private in-memory database.
        secret: the key of :func:`hash_user`; migrations that rewrite stored
            identities with it need it when the database holds any.

    Returns:
        The open database; close it with ``db.close()``.

    Raises:
        sqlite3.Error: the file cannot be opened or is not a database.
        StorageError: a newer version of zofia wrote the database.
    """
    in_memory = str(path) == MEMORY
    if not in_memory:
        _create_private(Path(path))
    conn = sqlite3.connect(MEMORY if in_memory else str(path), check_same_thread=False)
    try:
        db = Database(conn)
        if not in_memory:
            db.enable_wal()
        for pragma in (
            "foreign_keys=ON",
            "busy_timeout=5000",
            "synchronous=NORMAL",
            "secure_delete=ON",
        ):
            db.execute(f"PRAGMA {pragma}")
        migrate(db, secret=secret)
    except BaseException:
        conn.close()
        raise
    return db


def _create_private(path: Path) -> None:
    """Create ``path`` empty with mode ``0600`` if it does not exist yet."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def default_database_path() -> Path:
    """``zofia.db`` in the user data directory, which is created (``0700``) if missing.

    Returns:
        The path (the file itself may not exist yet).
    """
    directory = Path(platformdirs.user_data_dir("zofia", appauthor=False))
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    return directory / "zofia.db"


def load_or_create_secret(settings: StorageSettings, db_path: Path) -> bytes:
    """The key of :func:`hash_user`.

    ``settings.secret`` when set; otherwise the hex secret in ``<db>.secret``,
    generated on first use (32 random bytes, mode ``0600``, created with
    ``O_EXCL`` so that two processes starting together agree on one). An
    in-memory database gets a fresh random key: nothing outlives it anyway.

    Args:
        settings: the storage settings.
        db_path: the database file.

    Returns:
        The secret key.

    Raises:
        StorageError: the secret file exists but does not hold a secret.
        OSError: the secret file cannot be created or read.
    """
    if settings.secret:
        return settings.secret.encode("utf-8")
    if str(db_path) == MEMORY:
        return secrets.token_bytes(_SECRET_BYTES)
    secret_path = db_path.with_name(db_path.name + ".secret")
    try:
        fd = os.open(secret_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_secret(secret_path)
    key = secrets.token_bytes(_SECRET_BYTES)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key.hex() + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return key


def _read_secret(secret_path: Path) -> bytes:
    # Another process may have created the file a moment ago and be writing it.
    content = ""
    for _ in range(20):
        content = secret_path.read_text(encoding="ascii", errors="replace").strip()
        if content:
            break
        time.sleep(0.05)
    try:
        key = bytes.fromhex(content)
    except ValueError:
        key = b""
    if len(key) < 16:
        raise StorageError(
            f"{secret_path} does not hold a hex secret; restore it, or delete it to start"
            " a new one (existing user hashes will then no longer match)"
        )
    return key
