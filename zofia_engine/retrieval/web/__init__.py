"""Open-web search backends."""
