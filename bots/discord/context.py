"""What the Discord handlers share: the check service (every call awaited; off the
event loop), the settings, the cooldowns, the locks and the work in flight. A leaf: the
handlers import it, the client holds it, nothing imports back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import discord

from bots.chat.cooldowns import Cooldowns
from bots.chat.in_flight import InFlight
from bots.chat.reviews import OpenReviews
from bots.chat.turns import Turns
from bots.render.links import report_url
from bots.render.words import Words, chat_language, words_for
from bots.service.checks import CheckService
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.image_settings import ImageSettings

from .settings import MAX_COOLDOWN_S, PLATFORM, DiscordSettings

__all__ = ["DiscordContext", "askers_words", "context_of"]


@dataclass
class DiscordContext:
    """The bot's state for one run of the client.

    Args:
        service: the started check service.
        settings: the ``[discord]`` section.
        images: the engine's ``[images]`` caps (images refused before a download).
        audio: the engine's ``[audio]`` caps (voice notes refused before a download).
        public_url: ``[site] public_url``: where the report pages are; empty, the
            verdicts have no "Full report" link.
    """

    service: CheckService
    settings: DiscordSettings
    images: ImageSettings = field(default_factory=ImageSettings)
    audio: AudioSettings = field(default_factory=AudioSettings)
    public_url: str = ""
    cooldowns: Cooldowns = field(default_factory=lambda: Cooldowns(MAX_COOLDOWN_S))
    #: the reviews whose select or form is open (a Review press then posts nothing new)
    reviews: OpenReviews = field(default_factory=OpenReviews)
    #: the checks running, waited for at shutdown (:meth:`FactCheckBot.stop
    #: <bots.discord.client.FactCheckBot.stop>`)
    work: InFlight = field(default_factory=InFlight)
    #: each user's private requests, answered in turn (``[service] private_in_flight``
    #: at once: the bot's runtime sizes it)
    turns: Turns = field(default_factory=Turns)

    def log_chat(self, chat_id: object) -> str:
        """A chat as a log line names it: its keyed hash, never its id."""
        return self.service.namer.log_name(PLATFORM, chat_id)

    def report_url(self, check_id: str) -> str:
        """The check's report page, or ``""`` when no public address is set."""
        return report_url(self.public_url, check_id)


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
