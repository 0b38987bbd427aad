"""Cutting long text into messages a platform takes: at paragraphs, then lines,
sentences and words; and packing rendered parts into as few messages as fit."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

__all__ = ["pack", "split_text"]

# Paragraphs, then lines, then sentences, then words: (pattern, what joins the pieces).
_CUTS = (
    (re.compile(r"\n\s*\n"), "\n\n"),
    (re.compile(r"\n"), "\n"),
    (re.compile(r"(?<=[.!?…])\s+"), " "),
    (re.compile(r"\s+"), " "),
)


def _hard_cut(text: str, limit: int, measure: Callable[[str], int]) -> list[str]:
    pieces = []
    while text:
        low, high = 1, len(text)
        while low < high:  # the longest prefix that fits (measure grows with length)
            middle = (low + high + 1) // 2
            if measure(text[:middle]) <= limit:
                low = middle
            else:
                high = middle - 1
        pieces.append(text[:low])
        text = text[low:]
    return pieces


def split_text(
    text: str, limit: int, measure: Callable[[str], int] = len, *, _level: int = 0
) -> list[str]:
    """Cut ``text`` into pieces with ``measure(piece) <= limit``, at paragraph
    boundaries where possible, then at lines, sentences and words, and only as a
    last resort inside a word.

    ``measure`` is the length the platform counts, e.g. the length after
    escaping for HTML.

    Raises:
        ValueError: ``limit`` is below 1.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    if measure(text) <= limit:
        return [text] if text else []
    if _level == len(_CUTS):
        return _hard_cut(text, limit, measure)
    pattern, joiner = _CUTS[_level]
    pieces: list[str] = []
    current = ""
    for unit in pattern.split(text):
        if not unit:
            continue
        candidate = f"{current}{joiner}{unit}" if current else unit
        if measure(candidate) <= limit:
            current = candidate
            continue
        if current:
            pieces.append(current)
        if measure(unit) <= limit:
            current = unit
        else:
            *done, current = split_text(unit, limit, measure, _level=_level + 1)
            pieces.extend(done)
    if current:
        pieces.append(current)
    return pieces


def pack(
    parts: Sequence[str],
    limit: int,
    sep: str = "\n\n",
    measure: Callable[[str], int] = len,
) -> list[str]:
    """Join rendered ``parts`` into as few messages as keeping their order allows,
    each with ``measure(message) <= limit`` (Telegram counts UTF-16 units).

    Raises:
        ValueError: a part alone is longer than ``limit`` (split it first).
    """
    messages: list[str] = []
    current = ""
    for part in parts:
        if measure(part) > limit:
            raise ValueError(
                f"a part of length {measure(part)} exceeds the limit of {limit}; split it first"
            )
        candidate = f"{current}{sep}{part}" if current else part
        if measure(candidate) <= limit:
            current = candidate
        else:
            messages.append(current)
            current = part
    if current:
        messages.append(current)
    return messages
