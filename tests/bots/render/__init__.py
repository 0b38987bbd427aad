"""Tests of bots/render/."""
