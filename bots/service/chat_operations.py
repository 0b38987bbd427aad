"""What the bots read and write through the check service besides checks, with ids
as the platform gives them: the stored forms of who asked and where, chat settings,
votes, and a check as a chat may see it. ``service.chats`` of a
:class:`~bots.service.checks.CheckService`."""

from __future__ import annotations

from typing import Any

from storage.keys import hash_chat, hash_user
from storage.rows import CheckRow
from storage.store import CheckStore

__all__ = ["ChatOperations"]


class ChatOperations:
    """The named operations on the store that the bots use; ids go in as the platform
    gives them and are stored only as HMACs with ``secret``.

    Args:
        store: the open store.
        secret: the HMAC key for user ids and chat ids.
    """

    def __init__(self, store: CheckStore, secret: bytes) -> None:
        self.store = store
        self.secret = secret

    def user_hash(self, platform: str, user_id: str) -> str:
        """The stored stand-in for a platform user id (an HMAC, never the id)."""
        return hash_user(self.secret, platform, user_id)

    def chat_key(self, platform: str, chat_id: str) -> str:
        """The stored stand-in for a chat id (an HMAC: a private chat's id is a user's)."""
        return hash_chat(self.secret, platform, chat_id)

    def setting(self, platform: str, chat_id: str, key: str, default: Any = None) -> Any:
        """A chat's setting (the reply language, auto-check …), or ``default``."""
        return self.store.chats.get(platform, self.chat_key(platform, chat_id), key, default)

    def set_setting(self, platform: str, chat_id: str, key: str, value: Any) -> None:
        """Store a chat's setting, keyed by the chat's stored stand-in."""
        self.store.chats.set(platform, self.chat_key(platform, chat_id), key, value)

    def vote(self, row: CheckRow, platform: str, user_id: str, vote: int) -> tuple[int, int]:
        """Record a user's vote on a check's verdict; votes on a repeat count for the
        check it repeats, so one verdict's votes add up.

        Returns:
            ``(up, down)`` for that verdict, this vote included.
        """
        original = row.repeat_of or row.id
        self.store.feedback.add(original, self.user_hash(platform, user_id), vote)
        return self.store.feedback.counts(original)

    def check_in_chat(self, check_id: str, platform: str, chat_id: str) -> CheckRow | None:
        """The check, if it was asked in this chat of this platform; ``None`` for an unknown,
        forged or foreign id (a button shows it as "not found")."""
        row = self.store.checks.get(check_id)
        if row is None or row.platform != platform or row.chat != self.chat_key(platform, chat_id):
            return None
        return row
