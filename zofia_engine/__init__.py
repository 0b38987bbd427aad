"""ZoFia engine: zero-shot fake-news detection with entity-guided retrieval (Stage 1)
and multi-LLM interaction (Stage 2). ``Engine.check(post)`` runs both.

No platform code lives here; bots and the CLI call in. The engine and Stage 1
(``Engine``, ``EntityGuidedRetrieval``) are imported when first asked for, so that
importing the light parts (posts, reports, settings, errors) loads no models' code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import EngineSettings, load_config
from .errors import (
    ConfigError,
    InvalidPostError,
    LLMBudgetExceededError,
    LLMConfigError,
    LLMError,
    LLMRateLimitedError,
    LLMResponseError,
    LLMTimeoutError,
    ModelUnavailableError,
    SourceError,
    SourceRateLimitedError,
    SourceResponseError,
    SourceTimeoutError,
    ZofiaError,
)
from .post import Ablation, Post, ProgressEvent
from .records.stage1 import (
    Entity,
    Keyword,
    SourceStatus,
    Stage1Result,
    WebResult,
    WikipediaEntry,
)
from .report import Report

if TYPE_CHECKING:
    from .engine import Engine
    from .retrieval.pipeline import EntityGuidedRetrieval

__all__ = [
    "Ablation",
    "ConfigError",
    "Engine",
    "EngineSettings",
    "Entity",
    "EntityGuidedRetrieval",
    "InvalidPostError",
    "Keyword",
    "LLMBudgetExceededError",
    "LLMConfigError",
    "LLMError",
    "LLMRateLimitedError",
    "LLMResponseError",
    "LLMTimeoutError",
    "ModelUnavailableError",
    "Post",
    "ProgressEvent",
    "Report",
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


def __getattr__(name: str) -> Any:
    if name == "Engine":
        from .engine import Engine

        return Engine
    if name == "EntityGuidedRetrieval":
        from .retrieval.pipeline import EntityGuidedRetrieval

        return EntityGuidedRetrieval
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
