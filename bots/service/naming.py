"""How the service names who asked and where: never by the platform's ids, always by
their keyed hashes under the store's secret (:mod:`storage.keys`), the forms the store
keeps. A log line names a chat by the first 12 hex digits of its keyed hash
(:meth:`ChatNamer.log_name`), so that an operator can still match it with the chat's
records; no line names a user or a chat by its id."""

from __future__ import annotations

from storage.keys import hash_chat, hash_message, hash_user

__all__ = ["ChatNamer"]


class ChatNamer:
    """The keyed names of users and chats under one ``secret`` (the store's), held by
    the service that uses them (``service.namer``): a second service in one process
    keeps its own.

    Args:
        secret: the HMAC key.
    """

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def user(self, platform: str, user_id: str) -> str:
        """The stored stand-in for a platform user id (an HMAC, never the id)."""
        return hash_user(self._secret, platform, user_id)

    def chat(self, platform: str, chat_id: str) -> str:
        """The stored stand-in for a chat id (an HMAC: a private chat's id is a user's)."""
        return hash_chat(self._secret, platform, chat_id)

    def message(self, platform: str, message_id: str) -> str:
        """The stored stand-in for a platform's message id (an HMAC, never the id)."""
        return hash_message(self._secret, platform, message_id)

    def log_name(self, platform: str, chat_id: object) -> str:
        """A chat as a log line names it: the first 12 hex digits of its keyed hash."""
        return self.chat(platform, str(chat_id))[:12]
