"""Tests of zofia_engine/retrieval/."""
