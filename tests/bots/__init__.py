"""Tests of bots/."""
