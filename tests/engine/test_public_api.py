"""The engine's public names: exactly what ``__all__`` promises, each importable."""

from __future__ import annotations

import zofia_engine


def test_public_names() -> None:
    assert sorted(zofia_engine.__all__) == [
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


def test_error_tree() -> None:
    assert issubclass(zofia_engine.SourceRateLimitedError, zofia_engine.SourceError)
    assert issubclass(zofia_engine.SourceError, zofia_engine.ZofiaError)
    assert issubclass(zofia_engine.ConfigError, zofia_engine.ZofiaError)
    assert issubclass(zofia_engine.LLMTimeoutError, zofia_engine.LLMError)
    assert issubclass(zofia_engine.LLMError, zofia_engine.ZofiaError)
    # A refused request is an error answer, so callers that catch those still catch it.
    assert issubclass(zofia_engine.LLMConfigError, zofia_engine.LLMResponseError)
    assert issubclass(zofia_engine.InvalidPostError, zofia_engine.ZofiaError)
    err = zofia_engine.SourceTimeoutError("web:brave", "no answer")
    assert str(err) == "web:brave: no answer" and err.source == "web:brave"
