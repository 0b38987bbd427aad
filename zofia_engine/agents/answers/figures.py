"""The figures a claim states and those a fact-checker's answer gives, compared by code.

A figure is an amount with what it counts in: dollars ("$4,000", "$1.2 trillion"),
cents ("40 cents"), a share ("65 percent", "half", "one third"), or a count of
something ("18,000 jobs": its unit is the word it counts, so 18,000 jobs and 74 school
shootings are never compared; a number followed by no word is left out). A year ("in
2007", "since 1969") is a date, not a figure. Two figures are compared only in one
unit; a claim's figure is

* **stated** when the answer gives the same one (within the claim's own rounding:
  :func:`~zofia_engine.agents.parts.values.compare_numbers`' tolerance),
* **contradicted** when the answer gives others in its unit and none is the same,
* **not given** otherwise.

The words around a figure are not read here: "74 shootings, most of them not at a
school" states the claim's 74 and takes it apart. That is the model's question
(:mod:`.questions`); a figure settles a claim only when the model's reading agrees.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..parts.values import Comparison

__all__ = ["Figure", "compare_figures", "figures_in"]

_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_SHARES = {
    "half": 50.0,
    "a third": 100 / 3,
    "one third": 100 / 3,
    "one-third": 100 / 3,
    "two thirds": 200 / 3,
    "two-thirds": 200 / 3,
    "a quarter": 25.0,
    "one quarter": 25.0,
    "one-quarter": 25.0,
    "three quarters": 75.0,
    "three-quarters": 75.0,
}
_AMOUNT = re.compile(
    r"(?P<dollar>\$\s?)?(?P<number>\d{1,3}(?:,\d{3})+|\d+)(?P<fraction>\.\d+)?"
    r"(?:\s*(?P<scale>thousand|million|billion|trillion)\b)?"
    r"(?:\s*(?P<unit>%|percent\b|per cent\b|cents?\b|percentage points?\b))?",
    re.IGNORECASE,
)
_SHARE = re.compile(r"\b(" + "|".join(sorted(_SHARES, key=len, reverse=True)) + r")\b", re.I)
#: numbers agree within this share of the larger (a claim's rounding: "about 8,800")
AGREE_WITHIN = 0.05
#: and differ past this one
DIFFER_PAST = 0.15


@dataclass(frozen=True)
class Figure:
    """An amount (``value``) in its ``unit``: ``$``, ``¢``, ``%``, or for a count the
    word it counts (``jobs`` → ``job``), and the words that state it."""

    value: float
    unit: str
    text: str


_COUNTED = re.compile(r"\s+(?:more\s+|new\s+|additional\s+|fewer\s+)?([a-z]{3,})", re.I)


def _unit(match: re.Match[str], text: str) -> str:
    """The figure's unit; ``""`` for a number that counts no word it names."""
    if match.group("dollar"):
        return "$"
    word = (match.group("unit") or "").lower()
    if word.startswith("cent"):
        return "¢"
    if word:
        return "%"
    counted = _COUNTED.match(text, match.end())
    if counted is None or counted.group(1).lower() in _NOT_COUNTED:
        return ""
    return counted.group(1).lower().removesuffix("s")


#: words after a number that say nothing of what it counts
_NOT_COUNTED = frozenset(
    {"and", "the", "for", "from", "than", "that", "with", "was", "were", "are"}
)


def _year(match: re.Match[str]) -> bool:
    """A bare four-digit number from 1900 to 2099 with nothing after it: a year."""
    number = match.group("number")
    plain = not (match.group("dollar") or match.group("scale") or match.group("unit"))
    return plain and len(number) == 4 and 1900 <= int(number) <= 2099


def figures_in(text: str) -> list[Figure]:
    """Every figure ``text`` states, in order (years and ordinals left out)."""
    found: list[tuple[int, Figure]] = []
    for m in _AMOUNT.finditer(text):
        after = text[m.end() : m.end() + 2].lower()
        if _year(m) or re.match(r"(st|nd|rd|th)\b", after) or text[m.end() : m.end() + 1] == "s":
            continue  # "in 2007", "the 3rd", "the 1970s"
        value = float(m.group("number").replace(",", "") + (m.group("fraction") or ""))
        value *= _SCALES.get((m.group("scale") or "").lower(), 1.0)
        unit = _unit(m, text)
        if unit:
            found.append((m.start(), Figure(value, unit, m[0])))
    for m in _SHARE.finditer(text):
        found.append((m.start(), Figure(_SHARES[m.group(1).lower()], "%", m.group(0))))
    return [figure for _, figure in sorted(found, key=lambda pair: pair[0])]


def _against(mine: Figure, theirs: Figure) -> Comparison:
    scale = max(abs(mine.value), abs(theirs.value), 1e-9)
    gap = abs(mine.value - theirs.value) / scale
    if gap <= AGREE_WITHIN:
        return "agrees"
    return "differs" if gap > DIFFER_PAST else "unstated"


def compare_figures(claimed: Sequence[Figure], given: Sequence[Figure]) -> Comparison:
    """The claim's figures against those an answer gives: ``agrees`` when every claimed
    figure is given, ``differs`` when one has others in its unit and none the same, else
    ``unstated`` (also with no claimed figure)."""
    outcomes = []
    for mine in claimed:
        same_unit = [_against(mine, theirs) for theirs in given if theirs.unit == mine.unit]
        if "agrees" in same_unit:
            outcomes.append("agrees")
        elif same_unit and all(o == "differs" for o in same_unit):
            outcomes.append("differs")
        else:
            outcomes.append("unstated")
    if not outcomes:
        return "unstated"
    if "differs" in outcomes:
        return "differs"
    return "agrees" if all(o == "agrees" for o in outcomes) else "unstated"
