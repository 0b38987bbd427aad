"""Evaluation: verdict quality and cost on labelled datasets (``zofia eval``).

Library first: :func:`load_items` reads a dataset, :func:`sample_items` draws
a fixed sample, :func:`evaluate` runs it resumably, :func:`summarise` scores it.
"""

from __future__ import annotations

from .baseline import OnlyLLMBaseline, OnlyLLMReply
from .consistency import agreement, repeated_items
from .dataset import (
    LABEL_MAPPINGS,
    DatasetError,
    EvalItem,
    LabelMapping,
    load_items,
    sample_items,
)
from .metrics import (
    ClassScores,
    Interval,
    Metrics,
    accuracy,
    bootstrap_interval,
    class_scores,
    confusion_matrix,
    macro_f1,
    score,
)
from .runner import (
    CheckFunction,
    ItemRecord,
    ResultLog,
    RunHeader,
    evaluate,
    method_settings,
    run_key,
    summarise,
)

__all__ = [
    "LABEL_MAPPINGS",
    "CheckFunction",
    "ClassScores",
    "DatasetError",
    "EvalItem",
    "Interval",
    "ItemRecord",
    "LabelMapping",
    "Metrics",
    "OnlyLLMBaseline",
    "OnlyLLMReply",
    "ResultLog",
    "RunHeader",
    "accuracy",
    "agreement",
    "bootstrap_interval",
    "class_scores",
    "confusion_matrix",
    "evaluate",
    "load_items",
    "macro_f1",
    "method_settings",
    "repeated_items",
    "run_key",
    "sample_items",
    "score",
    "summarise",
]
