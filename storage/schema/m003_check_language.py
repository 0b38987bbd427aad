"""Migration m003: the language each check was answered in.

``checks.language`` (``''``: English), so that a repeat is answered only from a check
in the same language, and a resumed check keeps the language it began in.
"""

from __future__ import annotations

from ..sql import StoreDatabase

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute("ALTER TABLE checks ADD COLUMN language TEXT NOT NULL DEFAULT ''")
