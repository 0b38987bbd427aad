"""Open the store the settings name, with its user-id secret."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from zofia_engine.config import StorageSettings

from .database import default_database_path, load_or_create_secret, open_database
from .store import CheckStore

__all__ = ["open_store"]


def open_store(
    settings: StorageSettings, *, clock: Callable[[], dt.datetime] | None = None
) -> tuple[CheckStore, bytes]:
    """The store at ``settings.path`` (the user data directory by default), migrated,
    and the HMAC secret for user ids. ``clock`` is for tests that move time."""
    path = Path(settings.path).expanduser() if settings.path else default_database_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    store = CheckStore(open_database(path), clock=clock)
    return store, load_or_create_secret(settings, path)
