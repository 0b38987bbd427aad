"""Tests of bots/api/."""
