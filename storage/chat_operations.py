"""What the bots read and write through the check service besides checks: the stored
forms of who asked and where, chat settings, section marks, votes, and a check as
a chat may see it. :class:`~storage.service.CheckService` builds on it."""

from __future__ import annotations

from typing import Any

from zofia_engine.report import Report

from .keys import hash_chat, hash_user
from .rows import CheckRow
from .store import CheckStore

__all__ = ["ChatOperations"]


class ChatOperations:
    """The named operations on the store that the bots use; ids go in as the platform
    gives them and are stored only as HMACs with :attr:`secret`."""

    store: CheckStore
    secret: bytes

    def user_hash(self, platform: str, user_id: str) -> str:
        """The stored stand-in for a platform user id (an HMAC, never the id)."""
        return hash_user(self.secret, platform, user_id)

    def chat_key(self, platform: str, chat_id: str) -> str:
        """The stored stand-in for a chat id (an HMAC: a private chat's id is a user's)."""
        return hash_chat(self.secret, platform, chat_id)

    def chat_setting(self, platform: str, chat_id: str, key: str, default: Any = None) -> Any:
        """A chat's setting (the reply language, auto-check …), or ``default``."""
        return self.store.get_chat_setting(platform, self.chat_key(platform, chat_id), key, default)

    def set_chat_setting(self, platform: str, chat_id: str, key: str, value: Any) -> None:
        """Store a chat's setting, keyed by the chat's stored stand-in."""
        self.store.set_chat_setting(platform, self.chat_key(platform, chat_id), key, value)

    def section_mark(self, check_id: str, kind: str) -> Any:
        """Where a bot posted a section of the check (``None``: not posted yet)."""
        return self.store.section_mark(check_id, kind)

    def set_section_mark(self, check_id: str, kind: str, value: Any) -> None:
        """Record where a section was posted; ``None`` clears it (a later press retries)."""
        self.store.set_section_mark(check_id, kind, value)

    def vote(self, row: CheckRow, platform: str, user_id: str, vote: int) -> tuple[int, int]:
        """Record a user's vote on a check's verdict; votes on a repeat count for the
        check it repeats, so one verdict's votes add up.

        Returns:
            ``(up, down)`` for that verdict, this vote included.
        """
        original = row.repeat_of or row.id
        self.store.add_feedback(original, self.user_hash(platform, user_id), vote)
        return self.store.feedback_counts(original)

    def check_in_chat(self, check_id: str, platform: str, chat_id: str) -> CheckRow | None:
        """The check, if it was asked in this chat of this platform; ``None`` for an unknown,
        forged or foreign id (a button shows it as "not found")."""
        row = self.store.get_check(check_id)
        if row is None or row.platform != platform or row.chat != self.chat_key(platform, chat_id):
            return None
        return row

    def report_for(self, check_id: str) -> tuple[CheckRow, Report] | None:
        """A stored check and its report, following a repeat to its original."""
        return self.store.report_for(check_id)
