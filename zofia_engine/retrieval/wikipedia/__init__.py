"""Wikipedia backends."""
