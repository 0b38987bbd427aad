"""Tests of zofia_engine/images/."""
