"""False claims: a true claim with exactly one value changed to another of its kind.

Each change keeps the kind and the grain of the value it replaces, so that the claim
stays plausible and only the evidence can tell:

* a **place** for a place of the same grain (a country for a country, a continent for a
  continent, a city for a city, a river for a river: the grain is the head noun of the
  place's own short description), named as an article of the summaries names it;
* a **nationality** for one of another country (never one within the other, "Scottish"
  for "British");
* a **person** or an **organisation** for another of the same role (the last noun of
  their descriptions: a "novelist" for a novelist, a "painter" for a painter);
* a **date** moved by 10 to 60 years (a span: one end moved, the span kept in order; a
  century by two to five, a decade by three to eight);
* a **number** off by half or more (halved, or times 2, 2.5 or 3);
* an **ordinal** moved by two or more ("third" for "first"), a superlative for its
  opposite ("smallest" for "largest");
* a **category** for another common one of the same topic ("river" for "mountain" in
  geography, "composer" for "painter" among people: a head noun that at least
  :data:`COMMON` articles of the topic are said to be), never a word the subject's
  passage uses, nor a near synonym.

No replacement may occur in the subject's passage (three sentences and description),
and a place's replacement may not name, in its own description, any word of the value
it replaces ("Beijing", a city of China, never replaces "China").
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["COMMON", "Donors", "change", "role_of"]

COMMON = 4

_CONTINENTS = frozenset(
    ["africa", "asia", "europe", "north america", "south america", "oceania", "antarctica"]
)
_OPPOSITES = dict(
    pair
    for a, b in [
        ("largest", "smallest"),
        ("biggest", "smallest"),
        ("longest", "shortest"),
        ("highest", "lowest"),
        ("tallest", "shortest"),
        ("oldest", "youngest"),
        ("deepest", "shallowest"),
        ("heaviest", "lightest"),
        ("hottest", "coldest"),
        ("brightest", "faintest"),
        ("earliest", "latest"),
        ("widest", "narrowest"),
        ("richest", "poorest"),
        ("fastest", "slowest"),
        ("strongest", "weakest"),
        ("best", "worst"),
        ("most", "least"),
        ("northernmost", "southernmost"),
        ("easternmost", "westernmost"),
        ("busiest", "quietest"),
        ("greatest", "least"),
    ]
    for pair in ((a, b), (b, a))
)
_ORDINALS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
]
# Words too close to tell apart by evidence: never one for the other.
_NEAR = [
    {"city", "town", "village", "municipality", "capital", "metropolis", "commune"},
    {"film", "movie", "picture"},
    {"novel", "book", "novella"},
    {"song", "single", "ballad"},
    {"company", "corporation", "manufacturer", "conglomerate", "business", "firm"},
    {"writer", "author", "novelist", "poet", "playwright", "essayist"},
    {"politician", "statesman", "stateswoman", "leader", "president", "minister"},
    {"painter", "artist", "sculptor"},
    {"singer", "musician", "songwriter", "composer"},
    {"scientist", "physicist", "chemist", "biologist", "mathematician", "astronomer"},
    {"river", "stream", "tributary"},
    {"lake", "reservoir"},
    {"sea", "ocean", "gulf", "bay"},
    {"country", "state", "nation", "kingdom", "republic"},
    {"region", "area", "province"},
    {"empire", "kingdom", "dynasty", "state"},
    {"actor", "actress", "comedian", "entertainer"},
]


def _near(a: str, b: str) -> bool:
    a, b = a.casefold(), b.casefold()
    return a == b or any(a in group and b in group for group in _NEAR)


@dataclass
class Donors:
    """The values a false claim may borrow, by kind and grain.

    ``places``, ``people``, ``organisations``: grain or role → names (article titles);
    ``nationalities``: the words and their country; ``categories``: article kind →
    category words; ``describe``: a title's short description; ``country``: the
    country a name or nationality word is."""

    places: dict[str, list[str]] = field(default_factory=dict)
    people: dict[str, list[str]] = field(default_factory=dict)
    organisations: dict[str, list[str]] = field(default_factory=dict)
    nationalities: list[str] = field(default_factory=list)
    categories: dict[str, list[str]] = field(default_factory=dict)
    describe: Callable[[str], str] = lambda name: ""
    country: Callable[[str], str] = lambda name: ""
    within: Callable[[str, str], bool] = lambda a, b: False

    def grain(self, place: str) -> str:
        """A place's grain: ``continent``, ``country``, or its description's head noun."""
        key = place.casefold().removeprefix("the ").strip()
        if key in _CONTINENTS:
            return "continent"
        if self.country(place) and self.country(place) == _norm(place):
            return "country"
        return role_of(self.describe(place)) or "place"


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold().removeprefix("the ")))


def role_of(description: str) -> str:
    """The noun that says what a description's subject is: "English novelist
    (1775–1817)" → "novelist", "Capital city of Victoria, Australia" → "city"."""
    head = re.split(r"\s+(?:of|in|on|from|by|for|and|with|who|that|located)\s+|\(|,", description)[
        0
    ]
    words = re.findall(r"[A-Za-z]+", head)
    return words[-1].casefold() if words else ""


def _pick(rng: random.Random, pool: Sequence[str], ok: Callable[[str], bool]) -> str | None:
    candidates = [p for p in pool if ok(p)]
    return rng.choice(candidates) if candidates else None


def change(
    rng: random.Random, part: str, value: str, family: str, passage: str, donors: Donors
) -> str | None:
    """Another value of ``value``'s kind that the passage does not give (see the
    module's docstring; ``family``: the topic whose categories a category may borrow);
    ``None`` when there is none."""
    said = _norm(passage)

    def absent(candidate: str) -> bool:
        key = _norm(candidate)
        return bool(key) and f" {key} " not in f" {said} " and not _near(key, _norm(value))

    match part:
        case "place":
            return _place(rng, value, donors, absent)
        case "nationality":
            mine = donors.country(value)
            return _pick(
                rng, donors.nationalities, lambda n: absent(n) and _other_country(donors, mine, n)
            )
        case "person" | "organisation":
            pool = donors.people if part == "person" else donors.organisations
            role = role_of(donors.describe(value))
            return _pick(rng, pool.get(role, []), absent) if role else None
        case "date":
            return _date(rng, value, absent)
        case "number":
            return _number(rng, value)
        case "ordinal":
            return _ordinal(rng, value)
        case "category":
            head = value.split()[-1]
            kinds = donors.categories.get(family, [])
            return _pick(rng, kinds, lambda c: absent(c) and not _near(c.split()[-1], head))
    return None


def _other_country(donors: Donors, mine: str, word: str) -> bool:
    theirs = donors.country(word)
    return bool(mine and theirs) and theirs != mine and not donors.within(mine, theirs)


def _place(
    rng: random.Random, value: str, donors: Donors, absent: Callable[[str], bool]
) -> str | None:
    first = value.split(",")[0].strip()
    grain = donors.grain(first)
    words = set(_norm(value).split())

    def ok(candidate: str) -> bool:
        described = set(_norm(donors.describe(candidate)).split())
        return absent(candidate) and not (described & words)

    found = _pick(rng, donors.places.get(grain, []), ok)
    if found is None:
        return None
    return f"the {found}" if value.startswith("the ") and not found.startswith("the ") else found


_YEAR = re.compile(r"(?<!\d)(\d{3,4})(?!\d)")


def _date(rng: random.Random, value: str, absent: Callable[[str], bool]) -> str | None:
    century = re.search(r"(\d{1,2})(st|nd|rd|th)([\s-]+century)", value)
    if century:
        n = int(century.group(1)) + rng.choice([-1, 1]) * rng.randint(2, 5)
        if n < 1:
            n = int(century.group(1)) + 3
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10 if n % 100 not in (11, 12, 13) else 0, "th")
        return value[: century.start()] + f"{n}{suffix}" + value[century.start(3) :]
    decade = re.search(r"(\d{2,3})0s\b", value)
    if decade is not None:
        moved = int(decade.group(1)) + rng.choice([-1, 1]) * rng.randint(3, 8)
        return value[: decade.start()] + f"{moved}0s" + value[decade.end() :]
    years = list(_YEAR.finditer(value))
    if not years:
        return None
    for _ in range(8):
        which = rng.randrange(len(years))
        shift = rng.choice([-1, 1]) * rng.randint(10, 60)
        if len(years) == 2:  # a span: move its start back or its end on, kept in order
            which, shift = (0, -abs(shift)) if rng.random() < 0.5 else (1, abs(shift))
        m = years[which]
        moved = int(m.group(1)) + shift
        if not 100 <= moved <= 2030:
            continue
        out = value[: m.start()] + str(moved) + value[m.end() :]
        if absent(str(moved)):
            return out
    return None


_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def _number(rng: random.Random, value: str) -> str | None:
    m = _NUMBER.search(value)
    if m is None:
        return None
    text = m.group(0)
    number = float(text.replace(",", ""))
    if number == 0:
        return None
    factor = rng.choice([0.5, 2.0, 2.5, 3.0])
    moved = number * factor
    decimals = len(text.split(".")[1]) if "." in text else 0
    if decimals == 0 and moved != int(moved):
        moved = round(moved)
    written = f"{moved:,.{decimals}f}" if "," in text else f"{moved:.{decimals}f}"
    return value[: m.start()] + written + value[m.end() :]


def _ordinal(rng: random.Random, value: str) -> str | None:
    words = value.split()
    last = words[-1].casefold()
    if last in _OPPOSITES:
        return " ".join([*words[:-1], _OPPOSITES[last]])
    if words[0].casefold() in _OPPOSITES:
        return " ".join([_OPPOSITES[words[0].casefold()], *words[1:]])
    if last in _ORDINALS:
        i = _ORDINALS.index(last)
        options = [o for j, o in enumerate(_ORDINALS) if abs(j - i) >= 2]
        return " ".join([*words[:-1], rng.choice(options)])
    m = re.fullmatch(r"(\d+)(st|nd|rd|th)", last)
    if m:
        n = int(m.group(1)) + rng.choice([-1, 1]) * rng.randint(3, 9)
        n = n if n > 0 else int(m.group(1)) + 5
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10 if n % 100 not in (11, 12, 13) else 0, "th")
        return " ".join([*words[:-1], f"{n}{suffix}"])
    return None
