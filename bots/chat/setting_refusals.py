"""What a chat admin is told when a setting they typed cannot be taken, in the
requester's words: a language the bot cannot answer in, a confidence that is not a
percentage or not from 0 to 100, a cooldown out of its range.

The parsers raise :class:`SettingRefused`, a :class:`ValueError` whose message is the
English sentence (for the log); a platform says it in its requester's words with
:meth:`SettingRefused.said`. Language names, command names and setting keys stay as
they are in every language: they are what the commands take.
"""

from __future__ import annotations

from bots.render.languages import ENGLISH_NAME, LANGUAGES, language_name
from bots.render.words import N_, Words, translated_languages

__all__ = [
    "COOLDOWN_OUT_OF_RANGE",
    "NOT_A_PERCENTAGE",
    "PERCENTAGE_OUT_OF_RANGE",
    "UNKNOWN_LANGUAGE",
    "SettingRefused",
    "parse_language",
]

#: a language name not known (the names stay English: they are what the commands take)
UNKNOWN_LANGUAGE = N_(
    "{name} is not a language I can answer in; choose one of {languages}. The card's own "
    "words are in {translated}."
)
#: a confidence that is no number
NOT_A_PERCENTAGE = N_("Give the confidence as a percentage, like {example}, not {text}.")
#: a confidence below 0 or above 100 percent
PERCENTAGE_OUT_OF_RANGE = N_("The confidence must be from {least} to {most}, not {text}.")
#: a cooldown below 0 or above the most an admin may set
COOLDOWN_OUT_OF_RANGE = N_("The cooldown must be between 0 and {most} seconds.")


class SettingRefused(ValueError):
    """A setting's value refused: ``message`` (a catalogue's msgid) with its ``values``.

    Args:
        message: the sentence, marked with :func:`~bots.render.words.N_`.
        values: its blanks, the same in every language.
    """

    def __init__(self, message: str, /, **values: object) -> None:
        super().__init__(message.format(**values))
        self.message = message
        self.values = values

    def said(self, words: Words) -> str:
        """The refusal in ``words``."""
        return words(self.message, **self.values)


def parse_language(text: str) -> str:
    """``text`` as a stored language name (:func:`~bots.render.languages.language_name`).

    Raises:
        SettingRefused: it names no language the bot can answer in.
    """
    try:
        return language_name(text)
    except ValueError:
        raise SettingRefused(UNKNOWN_LANGUAGE, **_unknown(text)) from None


def _unknown(text: str) -> dict[str, object]:
    return {
        "name": repr(text.strip()[:40]),
        "languages": ", ".join([ENGLISH_NAME, *LANGUAGES]),
        "translated": ", ".join([ENGLISH_NAME, *translated_languages()]),
    }
