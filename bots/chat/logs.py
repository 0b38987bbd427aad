"""How a log line names a chat (the process's log format is :mod:`bots.app.json_logs`).

A log line names a chat by :func:`log_chat`, never by its id (a private chat's id is its
user's): the first 12 hex digits of its keyed hash, the one the store keeps in
``checks.chat``, so that an operator can still match a line with the chat's records.
No line names a user by id either. The platforms' client libraries would: their debug
lines hold every request's parameters and every update or gateway event whole (chat
and user ids, the posts' texts), so their loggers are capped at INFO
(:func:`cap_client_logs`), whatever level the process logs at.
"""

from __future__ import annotations

import logging
import secrets

from storage.keys import hash_chat

__all__ = ["CLIENT_LOGGERS", "cap_client_logs", "key_chats_with", "log_chat"]

#: the client libraries whose debug lines carry raw ids: python-telegram-bot (each
#: request's parameters, each update), discord.py (each gateway event and request),
#: and httpx and httpcore under them
CLIENT_LOGGERS = ("telegram", "discord", "httpx", "httpcore")

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


def cap_client_logs() -> None:
    """Log the client libraries' lines (:data:`CLIENT_LOGGERS`) from INFO up only: their
    debug lines carry raw chat and user ids. A logger set higher stays so."""
    for name in CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level < logging.INFO:  # unset (it would follow the root) or DEBUG
            logger.setLevel(logging.INFO)
