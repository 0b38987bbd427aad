"""SQLite storage of checks and reports (built with the storage issue)."""
