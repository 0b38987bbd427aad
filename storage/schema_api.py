"""The schema's step m016: the HTTP API's keys.

:mod:`storage.migrations` lists every step in order.
"""

from __future__ import annotations

from .sql import StoreDatabase

__all__ = ["m017_api_keys"]


def m017_api_keys(db: StoreDatabase, secret: bytes | None) -> None:
    """The keys of ``zofia api`` (:mod:`storage.api_keys`): each by its name, with the
    keyed hash of the key (:func:`~storage.keys.hash_api_key`), never the key; a revoked
    key keeps its row, so that its name, which its checks are asked under, is never
    given to another key."""
    db.execute(
        """
        CREATE TABLE api_keys (
            name TEXT PRIMARY KEY,
            key_hash TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        )
        """
    )
