"""What the Discord handlers share: the check service (every call awaited; off the
event loop), the settings, the cooldowns, the locks and the work in flight. A leaf: the
handlers import it, the client holds it, nothing imports back."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar

import discord

from bots.chat.context import ChatContext
from bots.chat.cooldowns import Cooldowns
from bots.chat.reviews import OpenReviews
from bots.render.words import Words, chat_language, words_for

from .settings import MAX_COOLDOWN_S, PLATFORM, DiscordSettings

__all__ = ["DiscordContext", "askers_words", "context_of"]


@dataclass
class DiscordContext(ChatContext):
    """The bot's state for one run of the client (:class:`~bots.chat.context.ChatContext`;
    ``work``: the checks :meth:`FactCheckBot.stop <bots.discord.client.FactCheckBot.stop>`
    waits for).

    Args:
        settings: the ``[discord]`` section.
    """

    platform: ClassVar[str] = PLATFORM

    settings: DiscordSettings
    _: KW_ONLY
    cooldowns: Cooldowns = field(default_factory=lambda: Cooldowns(MAX_COOLDOWN_S))
    #: the reviews whose select or form is open (a Review press then posts nothing new)
    reviews: OpenReviews = field(default_factory=OpenReviews)


def context_of(interaction: discord.Interaction[Any]) -> DiscordContext:
    """The context of the client an interaction arrived on."""
    context = getattr(interaction.client, "context", None)
    if not isinstance(context, DiscordContext):
        raise TypeError("the interaction did not come through the fact-check client")
    return context


def askers_words(interaction: discord.Interaction[Any]) -> Words:
    """The words of whoever sent ``interaction``, before any chat setting is read: their
    Discord client's language when the bot has words for it, else English."""
    return words_for(chat_language(None, interaction.locale.value))
