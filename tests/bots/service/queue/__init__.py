"""Tests of bots/service/queue/."""
