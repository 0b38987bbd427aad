"""Tests of bots/service/."""
