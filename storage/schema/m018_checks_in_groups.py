"""Migration m018: whether each check was asked in a group or a channel.

``checks.in_group`` (1: asked in a Telegram group or channel, a Discord server's
channel), so that a repeat, or a run joined, is answered across chats only from such a
check, never from a private chat's, an API key's or the terminal's
(:mod:`storage.other_chats`). The checks stored before it are their own chat's only
(0): for the repeat window (72 h by default) another chat's copy of their text is
checked again, rather than answered from a check that may have been a private chat's.
"""

from __future__ import annotations

from ..sql import StoreDatabase

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute("ALTER TABLE checks ADD COLUMN in_group INTEGER NOT NULL DEFAULT 0")
