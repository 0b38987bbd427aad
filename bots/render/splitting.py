"""Cutting long text into messages a platform takes: at paragraphs, then lines,
sentences and words; and packing rendered parts into as few messages as fit."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

__all__ = ["first_piece", "longest_prefix", "pack", "split_text"]

# Paragraphs, then lines, then sentences, then words: (pattern, what joins the pieces).
_CUTS = (
    (re.compile(r"\n\s*\n"), "\n\n"),
    (re.compile(r"\n"), "\n"),
    (re.compile(r"(?<=[.!?…])\s+"), " "),
    (re.compile(r"\s+"), " "),
)


def longest_prefix(
    text: str, limit: int, measure: Callable[[str], int], *, at_least: int = 0
) -> int:
    """The length of the longest prefix of ``text`` whose ``measure`` is within ``limit``
    (``at_least``, if none is); ``measure`` grows with the length and is never below it,
    so no prefix longer than ``limit`` is measured."""
    low, high = at_least, max(at_least, min(len(text), limit))
    while low < high:
        middle = (low + high + 1) // 2
        if measure(text[:middle]) <= limit:
            low = middle
        else:
            high = middle - 1
    return low


def _hard_cut(text: str, limit: int, measure: Callable[[str], int]) -> Iterator[str]:
    while text:
        cut = longest_prefix(text, limit, measure, at_least=1)
        yield text[:cut]
        text = text[cut:]


def _within(limit: int, measure: Callable[[str], int]) -> Callable[[str], bool]:
    """Whether a piece fits; one longer than ``limit`` is not measured (the measure of a
    long post is an escape of all of it)."""
    return lambda piece: len(piece) <= limit and measure(piece) <= limit


def _pieces(text: str, limit: int, measure: Callable[[str], int], level: int) -> Iterator[str]:
    """The pieces of :func:`split_text`, each given as soon as it is known: taking the first
    costs about ``limit`` characters of measuring, not the whole text's."""
    fits = _within(limit, measure)
    if fits(text):
        if text:
            yield text
        return
    if level == len(_CUTS):
        yield from _hard_cut(text, limit, measure)
        return
    pattern, joiner = _CUTS[level]
    current = ""
    for unit in pattern.split(text):
        if not unit:
            continue
        candidate = f"{current}{joiner}{unit}" if current else unit
        if fits(candidate):
            current = candidate
            continue
        if current:
            yield current
        if fits(unit):
            current = unit
            continue
        inner = _pieces(unit, limit, measure, level + 1)
        current = next(inner, "")  # a unit of white space alone has none
        for piece in inner:  # all but the unit's last piece are done
            yield current
            current = piece
    if current:
        yield current


def split_text(text: str, limit: int, measure: Callable[[str], int] = len) -> list[str]:
    """Cut ``text`` into pieces with ``measure(piece) <= limit``, at paragraph
    boundaries where possible, then at lines, sentences and words, and only as a
    last resort inside a word.

    ``measure`` is the length the platform counts, e.g. the length after
    escaping for HTML, and never less than ``len(piece)``.

    Raises:
        ValueError: ``limit`` is below 1.
    """
    return list(_checked(text, limit, measure))


def first_piece(text: str, limit: int, measure: Callable[[str], int] = len) -> str:
    """The first piece :func:`split_text` would cut (``""`` for an empty text), without
    cutting the rest: what a card shows of a long text before its "…"."""
    return next(_checked(text, limit, measure), "")


def _checked(text: str, limit: int, measure: Callable[[str], int]) -> Iterator[str]:
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    return _pieces(text, limit, measure, 0)


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
