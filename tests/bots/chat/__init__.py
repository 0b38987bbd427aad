"""Tests of bots/chat/."""
