"""Tests of bots/web/."""
