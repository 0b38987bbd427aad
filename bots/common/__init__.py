"""What the chat platforms and the CLI share: the card, sections, progress lines,
languages, cooldowns, links, building a post from a message, and the chat flows (check,
follow-ups, corrections, moderation). The deployment's composition is ``bots.app``."""
