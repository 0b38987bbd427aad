"""Platform front-ends: CLI now; Telegram and Discord come with later issues."""
