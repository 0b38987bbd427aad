"""What a chat user is told when a check cannot be answered: one sentence each."""

from __future__ import annotations

import asyncio

from storage.limits import BusyError, RateLimitedError, wait_words
from storage.service import CheckFailedError
from zofia_engine.errors import InvalidPostError

__all__ = ["error_sentence"]


def error_sentence(exc: BaseException) -> str:
    """One sentence a chat user can act on. What failed inside (hosts, ports, error
    bodies, key fragments) belongs in the log, which the caller writes."""
    if isinstance(exc, BusyError):
        return str(exc)
    if isinstance(exc, RateLimitedError):
        return f"Too many checks for now: please try again in {wait_words(exc.retry_after_s)}."
    if isinstance(exc, InvalidPostError):
        return str(exc)
    if isinstance(exc, CheckFailedError):
        return (
            "The check could not finish: a service it relies on failed. The bot's operator "
            "can see why in the log; please try again later."
        )
    if isinstance(exc, asyncio.CancelledError):
        return "The check was cancelled."
    return "Something went wrong on our side; the error was logged."
