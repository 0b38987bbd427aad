"""A server's own settings for the bot, kept in the store's chat settings.

Admins change them with ``/factcheck-settings``; a server that never did gets
the ``[discord]`` section's defaults. Each is read or written in one trip to the
store, off the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import discord
from discord import app_commands

from bots.chat.setting_refusals import COOLDOWN_OUT_OF_RANGE, SettingRefused, parse_language
from bots.render.languages import (
    ENGLISH_NAME,
    LANGUAGE_KEY,
    MAX_LANGUAGE,
    languages_matching,
    own_name,
)
from bots.render.words import ENGLISH, N_, Words, language_named, translated_languages
from bots.service.checks import CheckService

from .settings import MAX_COOLDOWN_S, PLATFORM, DiscordSettings

__all__ = [
    "MAX_CHOICES",
    "MAX_COOLDOWN_S",
    "MAX_LANGUAGE",
    "GuildSettings",
    "guild_settings",
    "language_choices",
    "save_guild_settings",
]

#: the most choices Discord shows an option at a time
MAX_CHOICES = 25

#: ``/factcheck-settings``' readout, a sentence a setting
COOLDOWN = N_("Cooldown between checks: {seconds} s.")
SHOWN_TO_ASKER = N_("Verdicts are shown only to whoever asked.")
SHOWN_TO_CHANNEL = N_("Verdicts are shown to the whole channel.")
WRITES_IN = N_("The panel writes in {language}.")
WRITES_IN_ASKERS = N_(
    "The panel writes in each asker's Discord language (English when I do not have it)."
)


@dataclass(frozen=True)
class GuildSettings:
    """``cooldown_s``: the least time between two checks started in the server;
    ``ephemeral``: verdicts are shown only to whoever asked; ``language``: the
    language the panel writes its summary and debate in, and the card its words
    (empty: English; ``None``: never set, each asker's Discord language, see
    :func:`~bots.render.words.chat_language`)."""

    cooldown_s: float
    ephemeral: bool
    language: str | None = None

    def describe(self, words: Words = ENGLISH) -> str:
        """The settings as ``/factcheck-settings`` shows them, in ``words``."""
        seen = words(SHOWN_TO_ASKER if self.ephemeral else SHOWN_TO_CHANNEL)
        if self.language is None:
            language = words(WRITES_IN_ASKERS)
        else:
            language = words(WRITES_IN, language=language_named(self.language, words))
        cooldown = words(COOLDOWN, seconds=f"{self.cooldown_s:g}")
        return f"{cooldown} {seen} {language}"


async def guild_settings(
    service: CheckService, chat: str, defaults: DiscordSettings
) -> GuildSettings:
    """The settings of ``chat`` (a server id, or ``dm-…`` for direct messages)."""
    wanted = {"cooldown_s": defaults.guild_cooldown_s, "ephemeral": False, LANGUAGE_KEY: None}
    found = await service.chats.settings(PLATFORM, chat, wanted)
    language = found[LANGUAGE_KEY]
    return GuildSettings(
        cooldown_s=float(found["cooldown_s"]),
        ephemeral=bool(found["ephemeral"]),
        language=None if language is None else str(language),
    )


async def save_guild_settings(
    service: CheckService,
    chat: str,
    *,
    cooldown_s: float | None = None,
    ephemeral: bool | None = None,
    language: str | None = None,
) -> None:
    """Store the settings given (``None`` leaves one as it is; ``language=""`` is English).

    Raises:
        SettingRefused: the cooldown is negative or above :data:`MAX_COOLDOWN_S`, or the
            language is not one the bot can answer in.
    """
    # Everything is checked before anything is stored: a refusal changes nothing.
    if cooldown_s is not None and not 0 <= cooldown_s <= MAX_COOLDOWN_S:
        raise SettingRefused(COOLDOWN_OUT_OF_RANGE, most=f"{MAX_COOLDOWN_S:g}")
    name = parse_language(language) if language is not None else None
    values: dict[str, Any] = {"cooldown_s": cooldown_s, "ephemeral": ephemeral, LANGUAGE_KEY: name}
    await service.chats.set_settings(
        PLATFORM, chat, {key: value for key, value in values.items() if value is not None}
    )


async def language_choices(
    interaction: discord.Interaction[Any], current: str
) -> list[app_commands.Choice[str]]:
    """What ``/factcheck-settings language:`` offers as an admin types (all 34 do not
    fit Discord's 25 choices): the languages whose English name or own name has a word
    starting with ``current``, English and those the card has words for first, each
    named in English and in itself."""
    worded = translated_languages()
    found = languages_matching(current, worded)[:MAX_CHOICES]
    return [app_commands.Choice(name=_choice_name(name, worded), value=name) for name in found]


def _choice_name(name: str, worded: dict[str, str]) -> str:
    if name == ENGLISH_NAME:
        return name
    said = f"{name} ({own_name(name)})" if own_name(name) != name else name
    return said if name in worded else f"{said}, panel only"
