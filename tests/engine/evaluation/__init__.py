"""Tests of zofia_engine/evaluation/."""
