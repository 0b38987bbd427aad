"""Stage 1 of ZoFia: entity-guided retrieval (paper §3)."""
