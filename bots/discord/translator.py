"""The slash commands' and their options' descriptions in each member's Discord
language: a :class:`discord.app_commands.Translator` that discord.py asks, when the
commands are synced, for each of Discord's locales, and that answers with the card's
catalogue (:func:`~bots.render.words.words_for`) where the card has words for it.

Names (of commands, of options, the "Fact-check" message command) stay as written: a
member types the same ``/factcheck message_link:`` in every language, as the docs and
the bot's own sentences say it. A description the catalogue does not translate, or
says in more than Discord's :data:`MAX_DESCRIPTION` characters, is left out of that
locale: Discord then shows the English.
"""

from __future__ import annotations

import discord
from discord.app_commands import (
    TranslationContextLocation,
    TranslationContextTypes,
    Translator,
    locale_str,
)

from bots.render.words import locale_language, words_for

__all__ = ["DESCRIBED", "MAX_DESCRIPTION", "DescriptionWords"]

#: where discord.py asks for a description (it asks for names too: they stay)
DESCRIBED = frozenset(
    {
        TranslationContextLocation.command_description,
        TranslationContextLocation.parameter_description,
    }
)
#: Discord's longest command or option description, in every locale
MAX_DESCRIPTION = 100


class DescriptionWords(Translator):
    """The card's words for a command's or an option's description (each marked with
    ``N_`` where it is written, :mod:`.commands`), in the locale's language."""

    async def translate(
        self, string: locale_str, locale: discord.Locale, context: TranslationContextTypes
    ) -> str | None:
        if context.location not in DESCRIBED:
            return None
        language = locale_language(locale.value)
        if not language:  # English, or a language the card has no words for
            return None
        said = words_for(language)(string.message)
        if said == string.message or len(said) > MAX_DESCRIPTION:
            return None
        return said
