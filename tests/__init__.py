"""The tests: one folder per package they test (docs/tests.md)."""
