"""Tests of zofia_engine/audio/."""
