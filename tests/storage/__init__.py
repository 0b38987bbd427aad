"""Tests of storage/."""
