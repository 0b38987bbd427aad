"""LLM backends, sessions and routing for Stage 2."""
