"""The engine's exceptions, one tree.

    ZofiaError
     ├── ConfigError            a setting is unknown, mistyped or missing
     ├── ModelUnavailableError  a model or its package is not installed
     └── SourceError            a retrieval backend did not deliver
          ├── SourceRateLimitedError   HTTP 429 after every retry
          ├── SourceTimeoutError       no answer within the timeout
          └── SourceResponseError      bad status, or a body that is not the API's format

Third-party errors (aiohttp, json, tenacity) are translated at the boundary
where they happen, with the original kept as ``__cause__``.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ModelUnavailableError",
    "SourceError",
    "SourceRateLimitedError",
    "SourceResponseError",
    "SourceTimeoutError",
    "ZofiaError",
]


class ZofiaError(Exception):
    """Base class of every error the engine raises on purpose."""


class ConfigError(ZofiaError):
    """A setting is wrong; the message names it."""


class ModelUnavailableError(ZofiaError):
    """A model could not be loaded; the message says what to install."""


class SourceError(ZofiaError):
    """A retrieval source failed. ``source`` names it (``web:brave``, ``wikipedia:mediawiki``)."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.detail = message


class SourceRateLimitedError(SourceError):
    """The source kept answering 429 Too Many Requests."""


class SourceTimeoutError(SourceError):
    """The source did not answer in time."""


class SourceResponseError(SourceError):
    """The source answered with an error status or a malformed body."""
