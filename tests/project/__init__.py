"""Tests of the whole project: its layers, sizes, docs, benches and attack corpora."""
