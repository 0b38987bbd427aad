"""Tests of bots/app/."""
