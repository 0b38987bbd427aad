"""Tests of bots/cli/."""
