"""Tests of zofia_engine/."""
