"""Tests of zofia_engine/agents/."""
