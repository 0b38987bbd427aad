"""Front-ends: the CLI (``bots.cli``), the Telegram and Discord bots, and what they
share (``bots.common``). They render and route; the fact-checking is the engine's."""
