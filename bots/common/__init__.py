"""What the chat platforms and the CLI share: the card, sections, progress lines,
languages, cooldowns, links, building a post from a message, the settings and the
service's lifetime."""
