"""The reply language a chat picks for the panel: one rule for every platform.

The name goes into every prompt of the chat's checks, so it is one of a fixed
list, never free text.
"""

from __future__ import annotations

__all__ = [
    "LANGUAGES",
    "LANGUAGE_KEY",
    "LANGUAGE_TAGS",
    "MAX_LANGUAGE",
    "language_name",
    "language_tag",
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
_BY_KEY = {name.casefold(): name for name in LANGUAGES}
_ENGLISH = ("english", "default", "none", "off")


def language_name(text: str) -> str:
    """``text`` as a stored language name (``"french"`` → ``"French"``); ``""`` for English.

    Raises:
        ValueError: it is not one of :data:`LANGUAGES` (or English).
    """
    key = " ".join(text.split()).casefold()
    if key in _ENGLISH:
        return ""
    if key not in _BY_KEY:
        raise ValueError(
            f"{text.strip()[:40]!r} is not a language I can answer in; choose one of "
            f"English, {', '.join(LANGUAGES)}"
        )
    return _BY_KEY[key]


def language_tag(name: str) -> str:
    """The BCP 47 tag of a stored language name (``"French"`` → ``"fr"``); ``"en"`` for
    English (``""``) and for a name not in :data:`LANGUAGES` (a row from an older list)."""
    return LANGUAGE_TAGS.get(name, "en")
