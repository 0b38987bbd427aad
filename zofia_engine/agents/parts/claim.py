"""A claim's checkable parts: what it is about, and what it says of it that a passage can
confirm or contradict.

"The Sydney Opera House is a performing arts centre in Melbourne, Victoria." is about
*the Sydney Opera House* (its grammatical subject) and says two checkable things of it:
a category (a *centre*) and a place (*Melbourne, Victoria*). The checkable kinds are
places, people, organisations, nationalities, dates, numbers, other names (works,
events, languages) and the category a copula gives ("X is a Y"). Names inside the
subject ("China" in "the Great Wall of China") are not parts: they say which thing the
claim is about. A date relative to the post ("on Tuesday") is a part no encyclopedia can
settle; it stays in the claim's words and keeps the claim from being confirmed.

:meth:`ClaimParts.blanked` writes the claim with every checkable part numbered out
("… a performing arts [1] in [2]."), which is what the reader asks a passage to fill:
the model never sees the claim's own values, so it cannot echo them.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from ...records.reading import PartKind
from ...retrieval.ner.parser import Parsed, Phrase, Word
from .names import name_key
from .phrases import RANK, with_phrases
from .ranks import rank_of
from .values import date_range, number_value, relative_date

__all__ = [
    "EVERYWHERE",
    "KIND_OF_LABEL",
    "ClaimParts",
    "Part",
    "PartKind",
    "claim_parts",
    "reported_clause",
    "subject_words",
]


#: spaCy's OntoNotes labels → the kind of part they name.
KIND_OF_LABEL: dict[str, PartKind] = {
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "PERSON": "person",
    "ORG": "organisation",
    "NORP": "nationality",
    "DATE": "date",
    "CARDINAL": "number",
    "QUANTITY": "number",
    "MONEY": "number",
    "PERCENT": "number",
    "WORK_OF_ART": "name",
    "EVENT": "name",
    "PRODUCT": "name",
    "LANGUAGE": "name",
    "LAW": "name",
    "ORDINAL": "ordinal",
    RANK: "ordinal",
}
_SUBJECTS = ("nsubj", "nsubjpass")
# A subject's modifiers that say more of it than which one it is.
_NOT_SUBJECT = ("appos", "acl", "relcl", "punct", "cc", "conj", "advcl", "parataxis")
# Verbs that report a claim rather than make one: the claim is the clause they wrap.
_REPORTING = frozenset(
    [
        "say",
        "tell",
        "believe",
        "think",
        "claim",
        "know",
        "report",
        "insist",
        "suggest",
        "hear",
        "read",
        "learn",
        "remember",
        "realise",
        "agree",
        "argue",
        "confirm",
        "explain",
        "realize",
        "reckon",
        "swear",
        "write",
        "post",
        "share",
    ]
)
_PRONOUNS = frozenset(
    [
        "i",
        "you",
        "we",
        "they",
        "he",
        "she",
        "it",
        "this",
        "that",
        "these",
        "those",
        "there",
        "who",
        "what",
    ]
)


@dataclass(frozen=True)
class Part:
    """One checkable part: its kind, its words in the claim (``names``: each name of a
    place run such as "Melbourne, Victoria"; a category's head word's lemma), where it
    is, whether a passage can settle it (not a relative date, a number or date that
    can be read), and the label spaCy gave its words."""

    kind: PartKind
    text: str
    start: int
    end: int
    names: tuple[str, ...]
    comparable: bool = True
    label: str = ""  # spaCy's label of its words ("GPE", "WORK_OF_ART"; "NP": a category)


@dataclass(frozen=True)
class ClaimParts:
    """A claim, the words of what it is about (``subject``; ``subject_head``: the lemma
    of its head word) and its parts in reading order. A ``named`` subject has a proper
    name in it; a ``generic`` one names a kind of thing ("Whales", "the tomato"), with
    neither a name, an "of" phrase nor a possessive ("the town's bridge" is one bridge)."""

    text: str
    subject: str
    subject_head: str
    parts: tuple[Part, ...]
    named: bool = False  # the subject has a proper name in it ("the Mona Lisa")
    generic: bool = False  # it names a kind of thing ("Whales", "the tomato")
    names: tuple[str, ...] = ()  # the proper nouns of the subject, normalised

    @property
    def checked(self) -> tuple[Part, ...]:
        """The parts a passage can settle."""
        return tuple(p for p in self.parts if p.comparable)

    def blanked(self) -> str:
        """The claim with each checked part replaced by its number: "[1]", "[2]" …"""
        return self.restated({})

    def restated(self, answers: dict[int, str]) -> str:
        """The claim with checked part ``n`` (from 1) replaced by ``answers[n]``, and by
        its number where there is no answer."""
        out, at = [], 0
        for n, part in enumerate(self.checked, 1):
            out += [self.text[at : part.start], answers.get(n, f"[{n}]")]
            at = part.end
        return "".join([*out, self.text[at:]])


_OBJECTS = frozenset(["me", "us", "him", "her", "them", "you", "that", ",", ":"])


def reported_clause(parsed: Parsed) -> str | None:
    """What a report reports: "Scientists say black holes are made of ice" → "black
    holes are made of ice"; "My cousin told me that the pyramid was built in 1850" →
    "The pyramid was built in 1850" (a sentence of its own). ``None`` when the claim is
    not a report. The small parser often misreads the reported clause inside the report
    ("the Titanic sank" as an object), so the caller parses it again on its own."""
    words = parsed.words
    for i, w in enumerate(words):
        if w.dep != "ROOT" or w.lemma.casefold() not in _REPORTING or _passive_of_a_thing(words, i):
            continue
        rest = i + 1
        while rest < len(words) and words[rest].text.casefold() in _OBJECTS:
            rest += 1
        if len(words) - rest < 3:
            return None
        clause = parsed.text[words[rest].start :].strip()
        return clause[:1].upper() + clause[1:]  # a sentence of its own, as parsers expect
    return None


def _passive_of_a_thing(words: tuple[Word, ...], verb: int) -> bool:
    """Whether the passive verb says who made a thing ("Romeo and Juliet was written
    by …"), not what someone reported ("It is said that …" stays a report)."""
    return any(
        w.head == verb
        and (w.dep == "agent" or (w.dep == "nsubjpass" and w.text.casefold() not in _PRONOUNS))
        for w in words
    )


def subject_words(parsed: Parsed) -> tuple[int, int, int] | None:
    """The first and last (exclusive) word of the claim's subject and its head word: the
    first nominal subject that is not a pronoun, with its determiners, modifiers and "of"
    phrases, without its appositions, clauses and other phrases; ``None`` when there is
    none. Names joined by "and" are one subject ("Romeo and Juliet")."""
    words = parsed.words
    head = next(
        (
            i
            for i, w in enumerate(words)
            if w.dep in _SUBJECTS
            and w.pos in ("NOUN", "PROPN", "ADJ", "X")
            and w.text.casefold() not in _PRONOUNS
        ),
        None,
    )
    if head is None:
        return None
    kept = {head}
    frontier = [head]
    while frontier:
        at = frontier.pop()
        for i, w in enumerate(words):
            if w.head == at and i != at and i not in kept and _in_subject(words, i):
                if w.dep == "prep" and w.text.casefold() != "of":
                    continue
                kept.add(i)
                frontier.append(i)
    return min(kept), max(kept) + 1, head


def _in_subject(words: tuple[Word, ...], i: int) -> bool:
    """Whether word ``i`` belongs to the subject its head word is in: not an apposition,
    a clause or punctuation; "and" and what it joins only between proper names."""
    w = words[i]
    if w.dep == "conj":
        return w.pos == "PROPN" and words[w.head].pos == "PROPN"
    if w.dep == "cc":
        head = words[w.head]
        joined = any(o.dep == "conj" and o.head == w.head and o.pos == "PROPN" for o in words)
        return head.pos == "PROPN" and joined
    return w.dep not in _NOT_SUBJECT


#: Places every place lies in: "one orbit of Earth" says nothing of where a thing is.
EVERYWHERE = frozenset({"earth", "world", "planet", "planet earth", "globe"})


def claim_parts(parsed: Parsed) -> ClaimParts:
    """The subject and the checkable parts of one parsed claim."""
    words = parsed.words
    span = subject_words(parsed)
    named = generic = False
    names: tuple[str, ...] = ()
    if span is None:
        subject, head_lemma, sub_start, sub_end = "", "", -1, -1
    else:
        first, last, head = span
        sub_start, sub_end = words[first].start, words[last - 1].end
        subject = parsed.text[sub_start:sub_end]
        head_lemma = words[head].lemma.casefold()
        inside = words[first:last]
        # Proper names: what the tagger calls one, and any capitalised word after the
        # first ("The Titanic", which the small tagger reads as an adjective).
        names = tuple(
            name_key(w.text)
            for n, w in enumerate(inside)
            if w.pos == "PROPN" or (n > 0 and w.text[:1].isupper())
        )
        named = bool(names)
        generic = not named and not any(w.dep in ("prep", "poss") for w in inside)
    parts = [
        _entity_part(e)
        for e in with_phrases(parsed)
        if e.label in KIND_OF_LABEL
        and not (sub_start <= e.start and e.end <= sub_end)
        and not _hyphen_bound(parsed.text, e)
        and not (KIND_OF_LABEL[e.label] == "place" and name_key(e.text) in EVERYWHERE)
    ]
    category = _category(parsed, parts, span[2] if span else None)
    if category is not None:
        parts.append(category)
    parts = _merged_places(sorted(parts, key=lambda p: p.start), parsed.text)
    return ClaimParts(parsed.text, subject, head_lemma, tuple(parts), named, generic, names)


def _hyphen_bound(text: str, e: Phrase) -> bool:
    """A number that is part of a compound word ("half-length", "two-thirds")."""
    return KIND_OF_LABEL[e.label] == "number" and text[e.end : e.end + 1] == "-"


def _entity_part(e: Phrase) -> Part:
    """The part an entity is. A "date" with no year that is an amount of time ("every 27
    days") is a number."""
    kind = KIND_OF_LABEL[e.label]
    comparable = True
    if kind == "date":
        comparable = not relative_date(e.text) and date_range(e.text) is not None
        if not comparable and number_value(e.text) is not None and not relative_date(e.text):
            kind, comparable = "number", True
    elif kind == "number":
        comparable = number_value(e.text) is not None
    elif kind == "ordinal":
        comparable = rank_of(e.text) is not None
    return Part(kind, e.text, e.start, e.end, (e.text,), comparable, e.label)


def _category(parsed: Parsed, parts: list[Part], subject: int | None) -> Part | None:
    """What a copula says the subject is ("… is a performing arts *centre*"): the
    attribute's head noun and the compounds before it, unless a part covers it."""
    words = parsed.words
    if subject is None:
        return None
    root = words[subject].head  # the subject's verb
    if words[root].lemma != "be":
        return None
    attr = next(
        (i for i, w in enumerate(words) if w.head == root and w.dep == "attr"),
        None,
    )
    if attr is None or words[attr].pos != "NOUN":
        return None
    first = attr
    while first > 0 and words[first - 1].dep == "compound" and words[first - 1].head == attr:
        first -= 1
    start, end = words[first].start, words[attr].end
    if any(p.start < end and start < p.end for p in parts):
        return None
    text = parsed.text[start:end]
    return Part("category", text, start, end, (words[attr].lemma.casefold(),), label="NP")


_LISTED = re.compile(r"^\s*,?\s*(?:and|or)\b", re.IGNORECASE)


def _merged_places(parts: list[Part], text: str) -> list[Part]:
    """Places one after another with only a comma between ("Melbourne, Victoria") are
    one part: they name one place at two scales. Places of a list ("Japan, Korea and
    Vietnam": an "and" or "or" before its last) stay one part each."""
    merged: list[Part] = []
    listed = any(
        a.kind == b.kind == "place" and _LISTED.match(text[a.end : b.start])
        for a, b in itertools.pairwise(parts)
    )
    for part in parts:
        last = merged[-1] if merged else None
        if (
            last is not None
            and not listed
            and last.kind == part.kind == "place"
            and text[last.end : part.start].strip() in (",", "")
        ):
            merged[-1] = Part(
                "place",
                text[last.start : part.end],
                last.start,
                part.end,
                (*last.names, *part.names),
                label=last.label,
            )
        else:
            merged.append(part)
    return merged
