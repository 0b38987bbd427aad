"""ZoFia engine: zero-shot fake-news detection with entity-guided retrieval (Stage 1)
and multi-LLM interaction (Stage 2, coming with the Stage-2 issue).

No platform code lives here; bots and the CLI call in.
"""

from __future__ import annotations

from .config import Settings, load_config
from .errors import (
    ConfigError,
    ModelUnavailableError,
    SourceError,
    SourceRateLimitedError,
    SourceResponseError,
    SourceTimeoutError,
    ZofiaError,
)
from .retrieval.models import (
    Entity,
    Keyword,
    SourceStatus,
    Stage1Result,
    WebResult,
    WikipediaEntry,
)
from .retrieval.pipeline import EntityGuidedRetrieval

__all__ = [
    "ConfigError",
    "Entity",
    "EntityGuidedRetrieval",
    "Keyword",
    "ModelUnavailableError",
    "Settings",
    "SourceError",
    "SourceRateLimitedError",
    "SourceResponseError",
    "SourceStatus",
    "SourceTimeoutError",
    "Stage1Result",
    "WebResult",
    "WikipediaEntry",
    "ZofiaError",
    "load_config",
]
