"""ZoFia engine: zero-shot fake-news detection with entity-guided retrieval (Stage 1)
and multi-LLM interaction (Stage 2). ``Engine.check(post)`` runs both.

No platform code lives here; bots and the CLI call in.
"""

from __future__ import annotations

from .config import Settings, load_config
from .engine import Engine
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
from .report import Report
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
    "Ablation",
    "ConfigError",
    "Engine",
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
