"""Structured logs: one JSON object per line, with the check id on every line logged
while a check's job runs (engine and libraries included: the id is a context variable,
which worker threads started with ``asyncio.to_thread`` inherit).

A log line names a chat by :func:`log_chat`, never by its id (a private chat's id is its
user's): the first 12 hex digits of its keyed hash, the one the store keeps in
``checks.chat``, so that an operator can still match a line with the chat's records.
"""

from __future__ import annotations

import json
import logging
import secrets
import sys

from bots.service.queue.worker import CHECK_ID
from storage.keys import hash_chat

__all__ = ["JsonLines", "json_lines_when_queued", "key_chats_with", "log_chat", "log_json_lines"]

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


class JsonLines(logging.Formatter):
    """``{"ts", "level", "logger", "check", "msg"}``, and ``"exc"`` / ``"stack"`` with a
    traceback or a stack."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}",
            "level": record.levelname,
            "logger": record.name,
            "check": CHECK_ID.get(),
            "msg": record.getMessage(),
        }
        # A traceback a filter has already formatted (and redacted: the Telegram bot's
        # token filter does) is used as it is, as logging.Formatter does.
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exc"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False)


def log_json_lines(level: int = logging.INFO) -> None:
    """Send the root logger's records to stderr as JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("httpx", "httpcore", "procrastinate"):
        logging.getLogger(name).setLevel(logging.WARNING)


def json_lines_when_queued(queued: bool) -> None:
    """A bot replica of a queued deployment logs JSON lines like the workers, so that
    one query over every process's logs follows a check; the handlers (and their
    filters, such as the token redactor) stay."""
    if not queued:
        return
    for handler in logging.getLogger().handlers:
        handler.setFormatter(JsonLines())
