"""Migration m017: the HTTP API's keys.

The keys of ``zofia api`` (:mod:`storage.api_keys`), each by its name, with the keyed
hash of the key (:func:`~storage.keys.hash_api_key`), never the key itself, so that a
copy of the database lets no one call the API. A revoked key keeps its row, so that its
name, which its checks are asked under, is never given to another key.
"""

from __future__ import annotations

from ..sql import StoreDatabase

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
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
