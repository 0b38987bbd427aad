"""What there is to check in a Discord message: its text, and who posted it."""

from __future__ import annotations

import discord

from bots.render.words import ENGLISH, Words

__all__ = ["message_origin", "message_text"]


def message_text(message: discord.Message) -> str:
    """What there is to check in a message: its text, else the text of its embeds."""
    if message.content.strip():
        return message.content
    parts = [part for embed in message.embeds for part in (embed.title, embed.description) if part]
    return "\n\n".join(parts)


def message_origin(message: discord.Message, words: Words = ENGLISH) -> str:
    """Where the post came from, in ``words`` (the chat's language): the message's
    author ("a Discord message by Sam")."""
    return words("a Discord message by {name}", name=message.author.display_name)
