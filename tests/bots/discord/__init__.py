"""Tests of bots/discord/."""
