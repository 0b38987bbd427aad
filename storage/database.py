"""Opening the database, and the small pure helpers around identities and text.

User ids never reach the database: :func:`hash_user` replaces them with an
HMAC keyed by a secret that lives outside it (the setting, else a ``0600``
file next to the database), so a copy of the database alone cannot be
matched back to accounts.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import sqlite3
import time
import unicodedata
from pathlib import Path

import platformdirs
from sqlite_utils import Database

from zofia_engine.config import StorageSettings

from .errors import StorageError
from .migrations import migrate

__all__ = [
    "clean_text",
    "default_database_path",
    "hash_user",
    "load_or_create_secret",
    "new_check_id",
    "open_database",
    "text_hash",
]

MEMORY = ":memory:"
_SECRET_BYTES = 32
_SURROGATE = re.compile("[\ud800-\udfff]")
_WHITESPACE = re.compile(r"\s+")


def open_database(path: str | Path) -> Database:
    """Open (creating if needed) the database and bring its schema up to date.

    Sets WAL journaling (files only), foreign keys, a 5 s busy timeout,
    ``synchronous=NORMAL`` and ``secure_delete`` (purged text is overwritten
    in the file, not just unlinked). The connection may be used from several
    threads, one at a time (:class:`~storage.store.CheckStore` serialises).

    Args:
        path: a file path, or ``":memory:"`` for a private in-memory database.

    Returns:
        The open database; close it with ``db.close()``.

    Raises:
        sqlite3.Error: the file cannot be opened or is not a database.
        StorageError: a newer version of zofia wrote the database.
    """
    in_memory = str(path) == MEMORY
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
        migrate(db)
    except BaseException:
        conn.close()
        raise
    return db


def default_database_path() -> Path:
    """``zofia.db`` in the user data directory, which is created if missing.

    Returns:
        The path (the file itself may not exist yet).
    """
    directory = Path(platformdirs.user_data_dir("zofia", appauthor=False))
    directory.mkdir(parents=True, exist_ok=True)
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


def hash_user(secret: bytes, platform: str, user_id: str) -> str:
    """The stored stand-in for a platform user id.

    Args:
        secret: the key from :func:`load_or_create_secret`.
        platform: ``telegram``, ``discord``, ``cli`` ….
        user_id: the platform's user id.

    Returns:
        HMAC-SHA256 of ``"{platform}:{user_id}"``, as 64 hex characters.
    """
    message = clean_text(f"{platform}:{user_id}").encode("utf-8")
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def new_check_id() -> str:
    """A new check id: 16 URL-safe characters (96 random bits), fit for callback data.

    Returns:
        The id.
    """
    return secrets.token_urlsafe(12)


def text_hash(text: str) -> str:
    """The key that finds exact repeats of a post.

    The text is NFKC-normalised, case-folded, its whitespace collapsed and
    stripped; broken surrogates become U+FFFD.

    Args:
        text: the post's text.

    Returns:
        SHA-256 of the normalised text, as 64 hex characters.
    """
    normalized = unicodedata.normalize("NFKC", clean_text(text)).casefold()
    normalized = _WHITESPACE.sub(" ", normalized).strip()
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()


def clean_text(text: str) -> str:
    """``text`` with lone surrogates (which UTF-8 cannot encode) replaced by U+FFFD.

    NUL and other characters are kept: SQLite stores them as they are.

    Args:
        text: any Python string.

    Returns:
        A string that encodes to UTF-8.
    """
    return _SURROGATE.sub("\ufffd", text)
