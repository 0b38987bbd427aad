"""Fake peers (search APIs and the like) that the tests talk real protocols to."""
