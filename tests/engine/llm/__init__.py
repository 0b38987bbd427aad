"""Tests of zofia_engine/llm/."""
