"""Dates and numbers as values that can be compared, not as words.

A claim's date says which time it means at some precision: a year ("in 1889"), a
decade ("the 1880s"), a century ("the 19th century"), a month or a day ("March 31,
1889"), a span ("from 1887 to 1889"). A date the passage gives agrees with it when
the two overlap, and differs when they cannot: 1889 lies in "1887 to 1889", not in
"1901". A date relative to when the post was written ("on Tuesday", "last week",
"next spring") is compared with nothing: a background article's date is about another
event (the first iPhone's "January 9, 2007" says nothing of "a new iPhone on Tuesday").

A number agrees within a small relative tolerance (the claim's own rounding: "330
metres" for 330.0, "about 8,800 m" for 8,848.86) and differs past a larger one;
between them it settles nothing. Numbers with different units are not compared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Comparison",
    "DateRange",
    "compare_dates",
    "compare_numbers",
    "compare_spans",
    "date_range",
    "number_value",
    "relative_date",
    "span_years",
]

#: How a claimed value stands against the value a passage gives for it.
Comparison = Literal["agrees", "differs", "unstated"]

_MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        1,
    )
    for m in names
}
_RELATIVE = re.compile(
    r"\b(today|tonight|yesterday|tomorrow|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|weekend|last|next|this|ago|recently|soon|now|current(ly)?|"
    r"morning|evening|afternoon|week|weeks)\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"(?<![\d,.])(\d{3,4})(?:\s*(BC|BCE|AD|CE))?(?![\d,])", re.IGNORECASE)
_DECADE = re.compile(r"(?<!\d)(\d{3})0s\b")
_CENTURY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)[\s-]+century\b(\s*(BC|BCE))?", re.IGNORECASE)
_DAY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\b")


@dataclass(frozen=True)
class DateRange:
    """The first and last day a date can mean, as (year, month, day) triples."""

    first: tuple[int, int, int]
    last: tuple[int, int, int]

    def overlaps(self, other: DateRange) -> bool:
        return self.first <= other.last and other.first <= self.last

    def within(self, other: DateRange) -> bool:
        return other.first <= self.first and self.last <= other.last


def relative_date(text: str) -> bool:
    """Whether ``text`` is a time relative to when the post was written ("on Tuesday",
    "last week", "next spring") and names no year."""
    return bool(_RELATIVE.search(text)) and not _YEAR.search(text)


def _month_in(text: str) -> int | None:
    for word in re.findall(r"[a-z]+", text.lower()):
        if word in _MONTHS:
            return _MONTHS[word]
    return None


def _years(text: str) -> list[int]:
    years = []
    for number, era in _YEAR.findall(text):
        value = int(number)
        if era.upper() in ("BC", "BCE"):
            value = -value
        elif not era and not 100 <= value <= 2200:
            continue
        years.append(value)
    return years


def date_range(text: str) -> DateRange | None:
    """The days ``text`` can mean, or ``None`` when it names no year, decade or century
    (or is relative: :func:`relative_date`). A span of years ("1887 to 1889", "1503–
    1519") covers both ends; a month or a day narrows a single year."""
    if relative_date(text):
        return None
    century = _CENTURY.search(text)
    if century:
        n = int(century.group(1))
        if century.group(2):
            return DateRange((-(n * 100), 1, 1), (-(n * 100 - 99), 12, 31))
        return DateRange((n * 100 - 99, 1, 1), (n * 100, 12, 31))
    decade = _DECADE.search(text)
    if decade:
        start = int(decade.group(1)) * 10
        return DateRange((start, 1, 1), (start + 9, 12, 31))
    years = _years(text)
    if not years:
        return None
    if len(years) > 1:
        return DateRange((min(years), 1, 1), (max(years), 12, 31))
    year = years[0]
    month = _month_in(text)
    if month is None:
        return DateRange((year, 1, 1), (year, 12, 31))
    rest = _YEAR.sub(" ", text)
    day = next((int(d) for d in _DAY.findall(rest) if 1 <= int(d) <= 31), None)
    if day is None:
        return DateRange((year, month, 1), (year, month, 31))
    return DateRange((year, month, day), (year, month, day))


_SPAN = re.compile(
    r"(\d{3,4})(?:\s*(?:BC|BCE|AD|CE))?\s*(?:to|and|until|till|through|[–—-])\s*"
    r"(?:\w+\s+){0,2}?(\d{2,4})(?!\d)",
    re.IGNORECASE,
)


def span_years(text: str) -> tuple[int, int] | None:
    """The first and last year of a span of years ("1979 to 1990", "from 1988 until
    1990", "1503–19"), or ``None`` when ``text`` is not a span."""
    m = _SPAN.search(text)
    if m is None or relative_date(text):
        return None
    first, last = int(m.group(1)), m.group(2)
    end = int(last) if len(last) >= 3 else int(str(first)[: -len(last)] + last)
    return (first, end) if first < end else None


def compare_dates(claimed: str, found: str) -> Comparison:
    """A claimed date against the date a passage gives. It agrees when it lies within a
    found date of at most :data:`NARROW_YEARS` years (1889 in "1887 to 1889") or when the
    found date lies within it ("1889" for "the 1880s"); it differs when the two cannot
    overlap; else, or when either is not a date that can be placed, it is unstated
    ("the 19th century" is consistent with 1889, but does not say 1889).

    A span of years is compared as a span (:func:`compare_spans`): "1969 to 1990"
    holds "1979 to 1990", but says something else of it."""
    if span_years(claimed) is not None:
        return compare_spans(claimed, found)
    mine, theirs = date_range(claimed), date_range(found)
    if mine is None or theirs is None:
        return "unstated"
    if not mine.overlaps(theirs):
        return "differs"
    if theirs.within(mine) or (mine.within(theirs) and _years_of(theirs) <= NARROW_YEARS):
        return "agrees"
    return "unstated"


def compare_spans(claimed: str, found: str) -> Comparison:
    """A claimed span of years against a date a passage gives for it: the same first
    and last years agree; another span differs (a span says when something began and
    ended: "from 1969 to 1990" is not "from 1979 to 1990"); a single date outside the
    span differs; one inside says nothing of its ends."""
    mine = span_years(claimed)
    if mine is None:
        return "unstated"
    theirs = span_years(found)
    if theirs is not None:
        return "agrees" if theirs == mine else "differs"
    found_range = date_range(found)
    if found_range is None:
        return "unstated"
    inside = mine[0] <= found_range.first[0] and found_range.last[0] <= mine[1]
    return "unstated" if inside else "differs"


#: A found span of years this long or shorter confirms any year inside it.
NARROW_YEARS = 3


def _years_of(r: DateRange) -> int:
    return r.last[0] - r.first[0]


_WORD_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "dozen": 12,
}
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_NUMBER = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?")
# Units a number may carry: what is compared must be in the same one.
_UNITS = {
    "m": "m",
    "metre": "m",
    "metres": "m",
    "meter": "m",
    "meters": "m",
    "km": "km",
    "kilometre": "km",
    "kilometres": "km",
    "kilometer": "km",
    "kilometers": "km",
    "ft": "ft",
    "feet": "ft",
    "foot": "ft",
    "mi": "mi",
    "mile": "mi",
    "miles": "mi",
    "kg": "kg",
    "kilograms": "kg",
    "tonnes": "t",
    "tons": "t",
    "%": "%",
    "percent": "%",
    "per cent": "%",
    "years": "years",
    "year": "years",
    "days": "days",
    "people": "people",
    "inhabitants": "people",
    "km2": "km2",
    "sq mi": "sqmi",
}


@dataclass(frozen=True)
class Quantity:
    """A number and its unit (``""`` when none is named)."""

    value: float
    unit: str


def number_value(text: str) -> Quantity | None:
    """The first number ``text`` states, with its scale ("3.2 million") and unit."""
    lowered = text.lower().replace("\u2009", " ").replace("\xa0", " ")
    found = _NUMBER.search(lowered)
    if found:
        value = float(found.group(1).replace(",", "") + (found.group(2) or ""))
        after = lowered[found.end() :]
    else:
        words = re.findall(r"[a-z]+", lowered)
        hits = [w for w in words if w in _WORD_NUMBERS]
        if not hits:
            return None
        value = float(_WORD_NUMBERS[hits[0]])
        after = lowered[lowered.index(hits[0]) + len(hits[0]) :]
    scale = re.match(r"\s*(thousand|million|billion|trillion)\b", after)
    if scale:
        value *= _SCALES[scale.group(1)]
        after = after[scale.end() :]
    unit_word = re.match(r"\s*(sq mi|per cent|km2|%|[a-z]+)", after)
    unit = _UNITS.get(unit_word.group(1), "") if unit_word else ""
    return Quantity(value, unit)


def compare_numbers(
    claimed: str, found: str, *, agree_within: float = 0.02, differ_past: float = 0.05
) -> Comparison:
    """A claimed number against the one a passage gives: agrees within ``agree_within``
    (relative), differs past ``differ_past``, unstated between them, when either has no
    number, or when their units differ."""
    mine, theirs = number_value(claimed), number_value(found)
    if mine is None or theirs is None:
        return "unstated"
    if mine.unit and theirs.unit and mine.unit != theirs.unit:
        return "unstated"
    scale = max(abs(mine.value), abs(theirs.value), 1e-9)
    gap = abs(mine.value - theirs.value) / scale
    if gap <= agree_within:
        return "agrees"
    return "differs" if gap > differ_past else "unstated"
