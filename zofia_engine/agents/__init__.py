"""Stage 2 (paper §4): the panel of LLM agents and the adversarial debate."""
