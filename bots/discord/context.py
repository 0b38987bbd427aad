"""What the Discord handlers share: the check service, the settings, the cooldowns and
the locks. A leaf: the handlers import it, the client holds it, nothing imports back."""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass, field
from typing import Any

import discord

from bots.common.cooldowns import Cooldowns
from bots.common.links import report_url
from storage.service import CheckService
from zofia_engine.image_settings import ImageSettings

from .settings import MAX_COOLDOWN_S, DiscordSettings

__all__ = ["DiscordContext", "context_of"]


@dataclass
class DiscordContext:
    """The bot's state for one run of the client.

    Args:
        service: the started check service.
        settings: the ``[discord]`` section.
        images: the engine's ``[images]`` caps (pictures refused before a download).
        public_url: ``[site] public_url``: where the report pages are; empty, the
            verdicts have no "Full report" link.
    """

    service: CheckService
    settings: DiscordSettings
    images: ImageSettings = field(default_factory=ImageSettings)
    public_url: str = ""
    cooldowns: Cooldowns = field(default_factory=lambda: Cooldowns(MAX_COOLDOWN_S))
    # One lock per key while someone holds or waits for it (then it is dropped).
    _locks: weakref.WeakValueDictionary[str, asyncio.Lock] = field(
        default_factory=weakref.WeakValueDictionary
    )

    def report_url(self, check_id: str) -> str:
        """The check's report page, or ``""`` when no public address is set."""
        return report_url(self.public_url, check_id)

    def lock(self, key: str) -> asyncio.Lock:
        """The lock of ``key`` (say, one section of one check), shared by concurrent users."""
        found = self._locks.get(key)
        if found is None:
            found = asyncio.Lock()
            self._locks[key] = found
        return found


def context_of(interaction: discord.Interaction[Any]) -> DiscordContext:
    """The context of the client an interaction arrived on."""
    context = getattr(interaction.client, "context", None)
    if not isinstance(context, DiscordContext):
        raise TypeError("the interaction did not come through the fact-check client")
    return context
