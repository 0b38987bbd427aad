"""The reply language a chat picks for the panel: one rule for every platform."""

from __future__ import annotations

__all__ = ["LANGUAGE_KEY", "MAX_LANGUAGE", "language_name"]

#: the chat setting that holds the language ("" means English)
LANGUAGE_KEY = "language"
MAX_LANGUAGE = 40
_ENGLISH = ("english", "default", "none", "off")


def language_name(text: str) -> str:
    """``text`` as a stored language name: spaces collapsed; ``""`` for English.

    Raises:
        ValueError: it is longer than :data:`MAX_LANGUAGE` or holds anything but
            letters, spaces, hyphens and parentheses (it goes into every prompt).
    """
    name = " ".join(text.split())
    if name.casefold() in _ENGLISH:
        return ""
    if len(name) > MAX_LANGUAGE or not all(c.isalpha() or c in " -()" for c in name):
        raise ValueError(
            "the language must be a name such as French or Português brasileiro "
            f"(letters only, at most {MAX_LANGUAGE} characters)"
        )
    return name
