"""Structured logs: one JSON object per line, with the check id on every line logged
while a check's job runs (engine and libraries included: the id is a context variable,
which worker threads started with ``asyncio.to_thread`` inherit). A process sets its
log format once, at start-up; a chat is named in a line by
:func:`bots.chat.logs.log_chat`."""

from __future__ import annotations

import json
import logging
import sys

from bots.service.queue.worker import CHECK_ID

__all__ = ["JsonLines", "json_lines_beside_workers", "log_json_lines"]


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


def json_lines_beside_workers() -> None:
    """A bot replica of a queued deployment logs JSON lines like the workers, so that
    one query over every process's logs follows a check; the handlers (and their
    filters, such as the token redactor) stay."""
    for handler in logging.getLogger().handlers:
        handler.setFormatter(JsonLines())
