"""Comparing names the way a reader does: case, accents and a leading "the" do not
matter; a shorter form of a person's name is the same person ("Leonardo" and "Leonardo
da Vinci"); a few well-known other names are the same place ("Holland", "the
Netherlands"); a nationality is its country ("Dutch", "Netherlands"); and a place
within another is not a different place ("Liberty Island" lies in "New York Harbor").

What lies within what comes from the offline encyclopedia's short descriptions
("Melbourne: Capital city of Victoria, Australia"), through :class:`NameKnowledge`.
Names written in different scripts are never called different: without a
transliteration table, "Москва" and "Moscow" cannot be told apart from two cities.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from typing import Protocol

from ...retrieval.wikipedia.titles import normalize_title
from .values import Comparison

__all__ = [
    "NO_KNOWLEDGE",
    "NameKnowledge",
    "compare_names",
    "compare_nationalities",
    "compare_places",
    "country_of",
    "described_as_place",
    "name_key",
    "script_of",
]

# Words that say what a name is, not which one: "New York City" is "New York".
_GENERIC = frozenset(
    [
        "city",
        "town",
        "village",
        "state",
        "province",
        "region",
        "county",
        "district",
        "prefecture",
        "island",
        "islands",
        "republic",
        "kingdom",
        "empire",
        "federation",
        "municipality",
        "river",
        "lake",
        "mount",
        "mountain",
        "ocean",
        "oceans",
        "sea",
        "desert",
    ]
)
_HONORIFICS = frozenset(
    [
        "sir",
        "dame",
        "dr",
        "doctor",
        "saint",
        "st",
        "lord",
        "lady",
        "king",
        "queen",
        "prince",
        "princess",
    ]
)
_SMALL = frozenset(["the", "of", "and", "for", "a", "an", "in", "on", "de", "des", "la"])
# Well-known other names of the same place (normalised).
_SAME_PLACE = [
    {"united states", "united states of america", "usa", "us", "america", "u s"},
    {"united kingdom", "uk", "britain", "great britain"},
    {"netherlands", "holland"},
    {"soviet union", "ussr"},
    {"czech republic", "czechia"},
    {"myanmar", "burma"},
    {"eswatini", "swaziland"},
    {"turkey", "turkiye"},
    {"ivory coast", "cote divoire"},
]


class NameKnowledge(Protocol):
    """What is known of a name besides its letters: an encyclopedia's short description
    of the article it is the title of ("Capital city of Victoria, Australia"), or ``""``."""

    def description(self, name: str) -> str:
        """The short description of the article titled ``name`` (blocking)."""
        ...


class _Nothing:
    def description(self, name: str) -> str:
        return ""


#: Knowing nothing: names are compared by their letters alone.
NO_KNOWLEDGE: NameKnowledge = _Nothing()


def script_of(text: str) -> str:
    """The script of ``text``'s first letter ("LATIN", "CYRILLIC", "CJK" …), or ``""``."""
    for ch in text:
        if ch.isalpha():
            return unicodedata.name(ch, "").split(" ")[0]
    return ""


def name_key(text: str) -> str:
    """``text`` normalised as titles are (:func:`normalize_title`), without honorifics."""
    words = normalize_title(text).split()
    while len(words) > 1 and words[0] in _HONORIFICS:
        words = words[1:]
    return " ".join(words)


def _core(key: str) -> str:
    words = [w for w in key.split() if w not in _GENERIC]
    return " ".join(words) or key


@lru_cache(maxsize=1)
def _countries() -> tuple[dict[str, str], dict[str, str]]:
    """Normalised country names and nationalities → the country's normalised name, and
    each country → the one it lies within, if any ("scotland" → "united kingdom"), from
    ``zofia_engine/data/nationalities.csv``."""
    table: dict[str, str] = {}
    within: dict[str, str] = {}
    text = resources.files("zofia_engine").joinpath("data/nationalities.csv").read_text("utf-8")
    for row in csv.DictReader(text.splitlines()):
        country = name_key(row["country"])
        for word in (row["country"], *row["names"].split("|")):
            if word.strip():
                table[name_key(word)] = country
        if row["within"]:
            within[country] = name_key(row["within"])
    return table, within


_BORN = re.compile(r"[\s-]+born$", re.IGNORECASE)


def country_of(name: str) -> str:
    """The normalised country ``name`` is, or is a nationality of ("Dutch" →
    "netherlands", "German-born" → "germany"), or ``""``."""
    key = name_key(_BORN.sub("", name.strip()))
    for group in _SAME_PLACE:
        if key in group:
            key = sorted(group, key=len)[-1]
    return _countries()[0].get(key, "")


def _nested(a: str, b: str) -> bool:
    """Whether one country lies within the other (Scotland, the United Kingdom)."""
    within = _countries()[1]
    return within.get(a) == b or within.get(b) == a


def _same_place(a: str, b: str) -> bool:
    if a == b or _core(a) == _core(b):
        return True
    if any(a in group and b in group for group in _SAME_PLACE):
        return True
    ca, cb = country_of(a), country_of(b)
    return bool(ca) and ca == cb


_PROPER = re.compile(r"[A-Z][\w'’.-]*(?:\s+(?:of|de|du|the|and)?\s*[A-Z][\w'’.-]*)*")


def _around(name: str, knowledge: NameKnowledge) -> set[str]:
    """The places ``name``'s description puts it in: "Capital city of Victoria,
    Australia" → {victoria, australia} (normalised)."""
    described = knowledge.description(name)
    return {name_key(m) for m in _PROPER.findall(described) if name_key(m)}


def _within(inner: str, outer: str, knowledge: NameKnowledge) -> bool:
    around = _around(inner, knowledge)
    return any(_same_place(place, name_key(outer)) for place in around)


def compare_places(
    claimed: Iterable[str], found: Iterable[str], knowledge: NameKnowledge
) -> Comparison:
    """The places a claim names for one thing ("Melbourne, Victoria") against those a
    passage names for it ("Sydney, New South Wales, Australia").

    Each claimed place agrees when the passage names it or a place within it (the claim
    is only broader); it is unsettled when every found place lies around it (the
    passage says only "Australia"); it differs when some found place neither is it, nor
    lies within it, nor contains it. The claim agrees when every place agrees, and
    differs when any differs."""
    mine = [c for c in claimed if name_key(c)]
    theirs = [f for f in found if name_key(f)]
    if not mine or not theirs:
        return "unstated"
    outcomes = [_one_place(c, theirs, knowledge) for c in mine]
    if "differs" in outcomes:
        return "differs"
    return "agrees" if all(o == "agrees" for o in outcomes) else "unstated"


def _one_place(claimed: str, found: list[str], knowledge: NameKnowledge) -> Comparison:
    key = name_key(claimed)
    if any(script_of(claimed) != script_of(f) for f in found):
        return "unstated"
    keys = [name_key(f) for f in found]
    if any(_same_place(key, k) for k in keys):
        return "agrees"
    if any(_within(f, claimed, knowledge) for f in found):
        return "agrees"  # the passage names a place inside the claimed one
    rest = [f for f in found if not _within(claimed, f, knowledge) and not _one_names(key, f)]
    return "differs" if rest else "unstated"


def _one_names(key: str, found: str) -> bool:
    """Whether one name's words are all in the other's ("the Habsburg Netherlands",
    "Netherlands"): it may name the same place, or one within the other."""
    mine, theirs = set(_core(key).split()), set(_core(name_key(found)).split())
    return bool(mine and theirs) and (mine <= theirs or theirs <= mine)


_PLACE_WORDS = frozenset(
    [
        "city",
        "town",
        "village",
        "capital",
        "country",
        "state",
        "province",
        "region",
        "island",
        "river",
        "mountain",
        "ocean",
        "sea",
        "lake",
        "continent",
        "desert",
        "planet",
        "moon",
        "satellite",
        "municipality",
        "county",
        "district",
        "peninsula",
        "valley",
        "archipelago",
        "metropolis",
        "territory",
    ]
)


def described_as_place(name: str, knowledge: NameKnowledge) -> bool:
    """Whether the encyclopedia describes ``name`` as a place ("Natural satellite of
    Earth", "Capital of France"): the tagger calls many places people or organisations."""
    described = set(re.findall(r"[a-z]+", knowledge.description(name).casefold()))
    return bool(described & _PLACE_WORDS)


def compare_names(claimed: str, found: str) -> Comparison:
    """People, organisations, works: the same when one name's words are all in the other
    ("Leonardo", "Leonardo da Vinci"; "Rembrandt", "Rembrandt van Rijn"), else
    different; unsettled across scripts."""
    if script_of(claimed) != script_of(found):
        return "unstated"
    a, b = set(name_key(claimed).split()), set(name_key(found).split())
    if not a or not b:
        return "unstated"
    if a <= b or b <= a or _acronym(claimed, found) or _acronym(found, claimed):
        return "agrees"
    return "differs"


def _acronym(short: str, long: str) -> bool:
    """ "UN" for "the United Nations", "NASA" for "National Aeronautics and Space
    Administration": the initials of the long name's words (its small words aside)."""
    letters = re.sub(r"[^A-Za-z]", "", short)
    if not (2 <= len(letters) <= 8) or not letters.isupper():
        return False
    words = [w for w in re.findall(r"[A-Za-z]+", long) if w.casefold() not in _SMALL]
    return "".join(w[0] for w in words).upper() == letters


def compare_nationalities(claimed: str, found: str) -> Comparison:
    """Nationalities and peoples ("Dutch", "Italian", "the Romans"): the same country
    (or the same word) agrees, different ones differ; a word that names no country is
    compared as a name."""
    if script_of(claimed) != script_of(found):
        return "unstated"
    a, b = country_of(claimed), country_of(found)
    if a and b:
        if a == b:
            return "agrees"
        return "unstated" if _nested(a, b) else "differs"
    return compare_names(_stem(claimed), _stem(found))


def _stem(word: str) -> str:
    """ "Romans" → "roman", "Chinese" → "chinese": peoples compared without a plural."""
    key = name_key(word)
    return key[:-1] if key.endswith("s") and not key.endswith("ss") else key
