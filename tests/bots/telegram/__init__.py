"""Tests of bots/telegram/."""
