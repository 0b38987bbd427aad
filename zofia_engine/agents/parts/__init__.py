"""Reading a claim part by part (question-based verification): see :mod:`.reader`."""

from __future__ import annotations

from .names import NO_KNOWLEDGE, NameKnowledge
from .reader import PartsRules, read_by_parts

__all__ = ["NO_KNOWLEDGE", "NameKnowledge", "PartsRules", "read_by_parts"]
