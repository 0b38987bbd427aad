"""The HTTP API other tiplines call: checks and votes for a key (``zofia api``)."""
