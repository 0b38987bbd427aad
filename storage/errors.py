"""Errors the storage raises on purpose."""

from __future__ import annotations

from zofia_engine.errors import ZofiaError

__all__ = ["CheckNotFoundError", "StorageError"]


class StorageError(ZofiaError):
    """The database or its secret cannot be used as it is; the message says why."""


class CheckNotFoundError(StorageError, LookupError):
    """No check has the given id."""
