"""The text of what an API sends back: HTML-free snippets and lenient dates, for the
web and fact-check backends and the reverse image search."""

from __future__ import annotations

import datetime as dt
import html
import re

__all__ = ["parse_date", "snippet_text"]

_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


def snippet_text(value: object) -> str:
    """Turn an API's snippet into plain text.

    Tags such as ``<strong>`` are dropped first and entities unescaped after, so
    an escaped ``&lt;b&gt;`` in the text survives as the literal ``<b>``.

    Args:
        value: the raw field; anything that is not a string gives ``""``.

    Returns:
        The text with tags removed, entities decoded and whitespace collapsed.
    """
    if not isinstance(value, str):
        return ""
    return _SPACE.sub(" ", html.unescape(_TAG.sub("", value))).strip()


def parse_date(value: object, *formats: str) -> dt.date | None:
    """Read a date from an ISO 8601 string, or from one of ``formats``.

    Args:
        value: the raw field (``"2023-05-10T08:00:00Z"``, ``"2023-05-10"``, ...).
        formats: further :func:`~datetime.datetime.strptime` formats to try.

    Returns:
        The calendar date, or ``None`` when the value is missing or unreadable.
    """
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return dt.datetime.fromisoformat(text).date()
    except ValueError:
        pass
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        pass
    for fmt in formats:
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    return None
