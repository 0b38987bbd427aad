"""Reading a claim against a fact-checker's answer to it: what the claim asserts, the
answer found among the evidence, the findings question, the figures compared by code,
and the rule that two readings must agree (:mod:`.reader`)."""

from __future__ import annotations

from .passage import Answer, AnswerRules, answer_for, is_answer
from .reader import read_answered

__all__ = ["Answer", "AnswerRules", "answer_for", "is_answer", "read_answered"]
