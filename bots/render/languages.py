"""The reply language a chat picks for the panel: one rule for every platform.

The name goes into every prompt of the chat's checks, so it is one of a fixed
list, never free text. What is known of each language beyond its English name (its
name in itself, its direction) is Babel's, from the Unicode CLDR.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Literal

from babel import Locale
from babel.core import UnknownLocaleError

__all__ = [
    "ENGLISH_NAME",
    "LANGUAGES",
    "LANGUAGE_KEY",
    "LANGUAGE_TAGS",
    "MAX_LANGUAGE",
    "language_name",
    "language_tag",
    "languages_matching",
    "own_name",
    "text_direction",
]

#: the chat setting that holds the language ("" means English)
LANGUAGE_KEY = "language"
#: the languages a chat can pick, by their English names; English is the default
LANGUAGES = (
    "Arabic",
    "Bengali",
    "Chinese",
    "Czech",
    "Danish",
    "Dutch",
    "Finnish",
    "French",
    "German",
    "Greek",
    "Hebrew",
    "Hindi",
    "Hungarian",
    "Indonesian",
    "Italian",
    "Japanese",
    "Korean",
    "Malay",
    "Norwegian",
    "Persian",
    "Polish",
    "Portuguese",
    "Romanian",
    "Russian",
    "Spanish",
    "Swahili",
    "Swedish",
    "Tagalog",
    "Thai",
    "Turkish",
    "Ukrainian",
    "Urdu",
    "Vietnamese",
)
MAX_LANGUAGE = max(len(name) for name in LANGUAGES)
#: each language's BCP 47 tag, for a page's ``lang``
LANGUAGE_TAGS = {
    "Arabic": "ar",
    "Bengali": "bn",
    "Chinese": "zh",
    "Czech": "cs",
    "Danish": "da",
    "Dutch": "nl",
    "Finnish": "fi",
    "French": "fr",
    "German": "de",
    "Greek": "el",
    "Hebrew": "he",
    "Hindi": "hi",
    "Hungarian": "hu",
    "Indonesian": "id",
    "Italian": "it",
    "Japanese": "ja",
    "Korean": "ko",
    "Malay": "ms",
    "Norwegian": "no",
    "Persian": "fa",
    "Polish": "pl",
    "Portuguese": "pt",
    "Romanian": "ro",
    "Russian": "ru",
    "Spanish": "es",
    "Swahili": "sw",
    "Swedish": "sv",
    "Tagalog": "tl",
    "Thai": "th",
    "Turkish": "tr",
    "Ukrainian": "uk",
    "Urdu": "ur",
    "Vietnamese": "vi",
}
#: what a chat that picks English is shown and picks it by
ENGLISH_NAME = "English"
_ENGLISH = ("english", "default", "none", "off")


@functools.cache
def own_name(name: str) -> str:
    """A language's name in itself, as Babel writes it (``"Portuguese"`` →
    ``"português"``, ``"Arabic"`` → ``"العربية"``); ``name`` when it has none."""
    tag = LANGUAGE_TAGS.get(name, "en")
    return Locale.parse(tag).get_language_name() or name


@functools.cache
def _by_key() -> dict[str, str]:
    """Each language by its English name and by its own, case-folded."""
    found = {own_name(name).casefold(): name for name in LANGUAGES}
    return found | {name.casefold(): name for name in LANGUAGES}


def language_name(text: str) -> str:
    """``text`` as a stored language name (``"french"`` or ``"Français"`` →
    ``"French"``); ``""`` for English.

    Raises:
        ValueError: it is not one of :data:`LANGUAGES` (or English), by its English
            name or its own.
    """
    key = " ".join(text.split()).casefold()
    if key in _ENGLISH:
        return ""
    if key not in _by_key():
        raise ValueError(
            f"{text.strip()[:40]!r} is not a language I can answer in; choose one of "
            f"English, {', '.join(LANGUAGES)}"
        )
    return _by_key()[key]


def language_tag(name: str) -> str:
    """The BCP 47 tag of a stored language name (``"French"`` → ``"fr"``); ``"en"`` for
    English (``""``) and for a name not in :data:`LANGUAGES` (a row from an older list)."""
    return LANGUAGE_TAGS.get(name, "en")


@functools.lru_cache(maxsize=64)
def text_direction(tag: str) -> Literal["ltr", "rtl"]:
    """``"rtl"`` for a language written right to left (Arabic, Hebrew, Persian, Urdu),
    else ``"ltr"``, by its BCP 47 tag (Babel's CLDR data; an unknown tag is ``"ltr"``)."""
    try:
        return "rtl" if Locale.parse(tag, sep="-").text_direction == "rtl" else "ltr"
    except (ValueError, UnknownLocaleError):
        return "ltr"


def languages_matching(typed: str, first: Iterable[str] = ()) -> list[str]:
    """The names a chat can pick, English and :data:`LANGUAGES`, whose English name or
    own name has a word that starts with ``typed`` (all of them when it is blank):
    English, then those in ``first`` (the languages the card has words for), then the
    others, each group in alphabetical order."""
    key = " ".join(typed.split()).casefold()
    leading = sorted(set(first) & set(LANGUAGES))
    ordered = [ENGLISH_NAME, *leading, *(name for name in LANGUAGES if name not in leading)]

    def matches(name: str) -> bool:
        words = f"{name} {own_name(name) if name != ENGLISH_NAME else ''}".casefold().split()
        return any(word.startswith(key) for word in words)

    return [name for name in ordered if matches(name)]
