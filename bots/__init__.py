"""Front-ends: the CLI (``bots.cli``), the Telegram and Discord bots, the report pages
and the HTTP API, over what they share: the check service (``bots.service``, the bottom
floor, on the store), the renderers (``bots.render``) above it and the chat flows
(``bots.chat``) above those. The composition root (``bots.app``) builds the service and
starts each platform. They render and route; the fact-checking is the engine's."""
