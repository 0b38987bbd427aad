"""ZoFia engine."""
