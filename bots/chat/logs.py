"""How a log line names a chat (the process's log format is :mod:`bots.app.json_logs`).

A log line names a chat by :func:`log_chat`, never by its id (a private chat's id is its
user's): the first 12 hex digits of its keyed hash, the one the store keeps in
``checks.chat``, so that an operator can still match a line with the chat's records.
"""

from __future__ import annotations

import secrets

from storage.keys import hash_chat

__all__ = ["key_chats_with", "log_chat"]

#: the key :func:`log_chat` hashes with: the store's secret once a service is built
#: (:func:`key_chats_with`); until then one of this process's own
_chat_secret = secrets.token_bytes(32)


def key_chats_with(secret: bytes) -> None:
    """Name chats in log lines by their keyed hash under the store's ``secret``."""
    global _chat_secret
    _chat_secret = secret


def log_chat(platform: str, chat_id: object) -> str:
    """A chat as a log line names it: the first 12 hex digits of its keyed hash."""
    return hash_chat(_chat_secret, platform, str(chat_id))[:12]
