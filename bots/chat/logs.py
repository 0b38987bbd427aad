"""No log line names a chat or a user by its id (a private chat's id is its user's):
ours name a chat by its keyed hash (:meth:`bots.service.naming.ChatNamer.log_name`, the
service's ``namer``; the process's log format is :mod:`bots.app.json_logs`). The
platforms' client libraries would: their debug lines hold every request's parameters
and every update or gateway event whole (chat and user ids, the posts' texts), so their
loggers are capped at INFO (:func:`cap_client_logs`), whatever level the process logs
at.
"""

from __future__ import annotations

import logging

__all__ = ["CLIENT_LOGGERS", "cap_client_logs"]

#: the client libraries whose debug lines carry raw ids: python-telegram-bot (each
#: request's parameters, each update), discord.py (each gateway event and request),
#: and httpx and httpcore under them
CLIENT_LOGGERS = ("telegram", "discord", "httpx", "httpcore")


def cap_client_logs() -> None:
    """Log the client libraries' lines (:data:`CLIENT_LOGGERS`) from INFO up only: their
    debug lines carry raw chat and user ids. A logger set higher stays so."""
    for name in CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level < logging.INFO:  # unset (it would follow the root) or DEBUG
            logger.setLevel(logging.INFO)
