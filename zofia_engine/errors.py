"""The engine's exceptions, one tree.

    ZofiaError
     ├── ConfigError            a setting is unknown, mistyped or missing
     ├── ModelUnavailableError  a model or its package is not installed
     ├── SourceError            a retrieval backend did not deliver
     │    ├── SourceRateLimitedError   HTTP 429 after every retry
     │    ├── SourceTimeoutError       no answer within the timeout
     │    └── SourceResponseError      bad status, or a body that is not the API's format
     ├── LLMError               a language-model call did not deliver
     │    ├── LLMRateLimitedError      HTTP 429 after every retry
     │    ├── LLMTimeoutError          no answer within the timeout
     │    ├── LLMResponseError         an error status, or a reply that is not the API's format
     │    │    └── LLMConfigError      the server refused the request as configured
     │    └── LLMBudgetExceededError   the check spent its call or token budget
     └── InvalidPostError       the post cannot be checked (empty, unreadable URL)

Third-party errors (aiohttp, json, tenacity) are translated at the boundary
where they happen, with the original kept as ``__cause__``.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "InvalidPostError",
    "LLMBudgetExceededError",
    "LLMConfigError",
    "LLMError",
    "LLMRateLimitedError",
    "LLMResponseError",
    "LLMTimeoutError",
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


class LLMError(ZofiaError):
    """A language-model call failed. ``backend`` names it (``openai:gpt-4o-mini``)."""

    def __init__(self, backend: str, message: str) -> None:
        super().__init__(f"{backend}: {message}")
        self.backend = backend
        self.detail = message


class LLMRateLimitedError(LLMError):
    """The server kept answering 429 Too Many Requests."""


class LLMTimeoutError(LLMError):
    """The server did not answer in time."""


class LLMResponseError(LLMError):
    """The server answered with an error status or a malformed body."""


class LLMConfigError(LLMResponseError):
    """The server refused the request as the settings make it (a 400 or 422, an unknown
    model, a bad key): retrying cannot help, so the check stops. ``setting`` names the
    setting to change."""

    def __init__(self, backend: str, message: str, setting: str) -> None:
        super().__init__(backend, message)
        self.setting = setting


class LLMBudgetExceededError(LLMError):
    """The check has used up its LLM call or token budget."""


class InvalidPostError(ZofiaError):
    """The post cannot be checked; the message says why in one sentence."""
