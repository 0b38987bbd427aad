"""The reply language a chat picks for the panel: one rule for every platform.

The name goes into every prompt of the chat's checks, so it is one of a fixed
list, never free text.
"""

from __future__ import annotations

__all__ = ["LANGUAGES", "LANGUAGE_KEY", "MAX_LANGUAGE", "language_name"]

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
