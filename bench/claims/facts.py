"""Facts read off an article's sentences, each written back as a short claim.

A fact is one checkable value of a sentence about the article's subject, and the claim
that states it (:mod:`.realize` cuts the sentence down). The values:

* **places**: a place the tagger calls a country, city or region (GPE), or a location
  or facility that is itself an article's title; a run with commas between ("Sydney,
  New South Wales, Australia") is one value;
* **people** and **organisations** that are the title of an article of that kind (the
  small tagger calls many things people; an article is a name we know);
* **nationalities** the nationalities table knows ("Italian", not "Arthurian");
* **dates** with a year, decade or century, and **spans** of years ("from 1979 to
  1990", "between 1503 and 1519"), one value each;
* **numbers** with digits (not a year);
* **ordinals** and **superlatives** ("the third Islamic caliphate", "the longest
  river");
* the **category** a copula gives ("… is a *novel*"), unless it is a word that names
  no kind ("branch", "type", "one").

A sentence is about the subject when its subject is the article's (the first
sentence's, named; a later one's, a pronoun, "The film", or the name again).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from spacy.tokens import Doc, Span, Token

from .realize import SUBJECTS, in_parentheses, list_of, realize, root_of

__all__ = ["Fact", "Known", "facts_of", "subject_phrase"]

#: What is known of a name: the kind of the article it is the title of, or ``None``.
Known = Callable[[str], str | None]

_KIND_OF_LABEL = {
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
    "ORDINAL": "ordinal",
}
_PRONOUNS = {"it": False, "he": False, "she": False, "they": True}
_SUPERLATIVE = re.compile(r"^(?:most|least)\s+\w+$|^\w+est$", re.IGNORECASE)
_NOT_SUPERLATIVE = frozenset(["west", "interest", "honest", "modest", "forest", "earnest", "rest"])
_SPAN = re.compile(
    r"\b(?:from|between)\s+(\d{3,4}(?:\s*(?:BC|BCE|AD|CE))?)\s+(?:to|and|until)\s+(\d{3,4})\b"
    r"|\b(\d{3,4})\s*[–-]\s*(\d{2,4})\b"
)
# Category heads that say what role a thing plays, not what kind it is.
_NO_KIND = frozenset(
    [
        "branch",
        "type",
        "form",
        "part",
        "member",
        "one",
        "kind",
        "set",
        "group",
        "term",
        "name",
        "example",
        "way",
        "variety",
        "piece",
        "use",
        "area",
        "aspect",
        "series",
        "collection",
        "number",
        "range",
        "body",
        "state",
        "process",
        "field",
        "study",
        "system",
        "concept",
        "method",
        "class",
        "family",
        "order",
        "unit",
        "word",
        "act",
        "practice",
        "means",
        "measure",
        "description",
        "category",
        "element",
        "process",
        "product",
        "thing",
        "object",
        "entity",
        "idea",
        "subject",
        "topic",
        "species",
        "genus",
        "embodiment",
        "tendency",
        "title",
        "nickname",
        "list",
        "history",
        "result",
        "source",
    ]
)
_KNOWN_LABELS = {"person": "person", "organisation": "organisation"}


@dataclass(frozen=True)
class Fact:
    """Values of one sentence (``sentence``: its index in the article) and the claim
    that states them. The first value is at ``claim[start:end]`` (``part``: its kind,
    ``label``: its entity label, "NP" for a category, "JJS" for a superlative);
    ``others``: the other values' (start, end, part). ``shape``: ``plain``, ``span``,
    ``list``, ``ordinal``, ``multi`` (the passage gives another value of its kind), or
    ``two_parts`` (two values)."""

    sentence: int
    part: str
    value: str
    claim: str
    start: int
    end: int
    shape: str
    label: str
    others: tuple[tuple[int, int, str], ...] = ()


def subject_phrase(first: Doc, name: str) -> str | None:
    """How the first sentence names the subject, to write it the same way ("The Nile",
    "The tiger", "Angela Merkel"): its title with the sentence's "The" before it when it
    has one; ``None`` when the first sentence's subject does not name it."""
    subject = _subject(first)
    if subject is None:
        return None
    words = _content(name)
    said = _content(first[subject.left_edge.i : subject.right_edge.i + 1].text)
    if not words or len(words & said) * 2 < len(words):
        return None
    at = first.text.casefold().find(name.casefold())
    if at < 0:
        return name
    said_name = first.text[at : at + len(name)]
    before = re.search(r"(?:^|\s)(the|an?)\s+$", first.text[:at], re.IGNORECASE)
    if before is None:
        return name if said_name[:1].isupper() else said_name
    return before.group(1).capitalize() + " " + said_name


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.casefold()) if w not in {"the", "of", "a", "an"}}


def _subject(doc: Doc) -> Token | None:
    root = root_of(doc)
    if root is None:
        return None
    return next((c for c in root.children if c.dep_ in SUBJECTS), None)


def _about_subject(doc: Doc, index: int, name: str, category: str) -> Token | None:
    """The sentence's subject word when it is the article's subject."""
    subject = _subject(doc)
    if subject is None or index == 0:
        return subject
    words = doc[subject.left_edge.i : subject.right_edge.i + 1]
    lowered = subject.lower_
    if len(words) == 1 and lowered in _PRONOUNS:
        return subject if _PRONOUNS[lowered] == name.endswith("s") else None
    said = _content(words.text)
    if said and said <= _content(name):
        return subject
    if category and lowered == category and words[0].lower_ in ("the", "this"):
        return subject
    return None


def _spans(doc: Doc) -> list[Span]:
    """Spans of years ("1979 to 1990" of "from 1979 to 1990"), as spans of words."""
    found = []
    for m in _SPAN.finditer(doc.text):
        a, b = (1, 2) if m.group(1) else (3, 4)
        span = doc.char_span(m.start(a), m.end(b), alignment_mode="expand")
        if span is not None:
            found.append(span)
    return found


def _place_runs(doc: Doc, entities: list[Span]) -> list[Span]:
    """Places with only commas between them, merged into one value."""
    runs: list[Span] = []
    for e in entities:
        last = runs[-1] if runs else None
        if last is not None and doc[last.end : e.start].text.strip() == ",":
            runs[-1] = doc[last.start : e.end]
        else:
            runs.append(e)
    return runs


def _category(doc: Doc) -> Span | None:
    """What a copula says the subject is: the attribute's head noun and its compounds."""
    root = root_of(doc)
    if root is None or root.lemma_ != "be":
        return None
    attr = next((c for c in root.children if c.dep_ == "attr" and c.pos_ == "NOUN"), None)
    if attr is None or attr.ent_type_ or attr.lemma_.casefold() in _NO_KIND:
        return None
    first = attr.i
    while first > 0 and doc[first - 1].dep_ == "compound" and doc[first - 1].head == attr:
        first -= 1
    return doc[first : attr.i + 1]


def _ranks(t: Token) -> bool:
    """Whether the noun ``t`` says what the subject is: the copula's attribute, or the
    object of "one of" under it ("one of the greatest artists")."""
    if t.dep_ == "attr":
        return True
    return t.dep_ == "pobj" and t.head.lower_ == "of" and t.head.head.dep_ == "attr"


def _superlatives(doc: Doc) -> list[Span]:
    """Superlatives that rank the subject ("the *longest* river", "one of the *most
    luminous* stars")."""
    found = []
    for t in doc:
        if t.dep_ != "amod" or t.ent_type_ or t.lower_ in _NOT_SUPERLATIVE or not _ranks(t.head):
            continue
        start = t.i - 1 if t.i and doc[t.i - 1].lower_ in ("most", "least") else t.i
        if t.tag_ == "JJS" or _SUPERLATIVE.match(doc[start : t.i + 1].text):
            found.append(doc[start : t.i + 1])
    return found


def _kept(e: Span, kind: str, known: Known, country: Callable[[str], str]) -> bool:
    text = e.text
    if kind == "date":
        return bool(re.search(r"\d{3,4}|century|\d0s", text))
    if kind == "number":  # not a year, nor a number after "from", "to", "in" (a year)
        after = e.root.head.lower_ in ("from", "to", "until", "in", "between", "since")
        return (
            bool(re.search(r"\d", text)) and not re.fullmatch(r"1\d{3}|20\d\d", text) and not after
        )
    if kind == "nationality":
        return bool(country(text))
    if kind == "place":
        return known(text) in ("place", "landmark") or bool(country(text))
    if kind in _KNOWN_LABELS:
        return known(text) == _KNOWN_LABELS[kind]
    return True


def values_of(
    doc: Doc, skip: set[int], known: Known, country: Callable[[str], str]
) -> list[tuple[Span, str, str]]:
    """The sentence's checkable values outside ``skip``: (span, part kind, label)."""
    spans = [s for s in _spans(doc) if not any(t.i in skip for t in s)]
    taken = {t.i for s in spans for t in s}
    found = [(s, "date", "DATE") for s in spans]
    places = [e for e in doc.ents if _KIND_OF_LABEL.get(e.label_) == "place"]
    entities = [e for e in doc.ents if _KIND_OF_LABEL.get(e.label_) != "place"]
    for e in [*_place_runs(doc, places), *entities]:
        label = e.label_ or doc[e.start].ent_type_
        kind = _KIND_OF_LABEL.get(label)
        if kind is None or any(t.i in skip or t.i in taken for t in e):
            continue
        if kind == "ordinal" and not e.text.islower():
            continue  # "Fifth Avenue", "the Second World War": a name, not a rank
        if _kept(e, kind, known, country):
            found.append((e, kind, label))
    category = _category(doc)
    if category is not None and not any(t.i in skip for t in category) and category.text.islower():
        found.append((category, "category", "NP"))
    found += [(s, "ordinal", "JJS") for s in _superlatives(doc) if not any(t.i in skip for t in s)]
    return sorted(found, key=lambda v: v[0].start)


def _shape(span: Span, kind: str, passage: list[tuple[str, str]]) -> str:
    if list_of(span.root):
        return "list"
    if kind == "date" and _SPAN.search(span.doc[max(0, span.start - 1) : span.end].text):
        return "span"
    if kind == "ordinal":
        return "ordinal"
    if any(k == kind and t != span.text for k, t in passage):
        return "multi"
    return "plain"


def facts_of(
    docs: Sequence[Doc], name: str, known: Known, country: Callable[[str], str]
) -> list[Fact]:
    """Every fact of an article's parsed sentences ``docs`` whose claim can be written:
    each value alone, and each sentence's first two values that can stand together
    (``two_parts``)."""
    phrase = subject_phrase(docs[0], name) if docs else None
    if phrase is None:
        return []
    category_span = _category(docs[0])
    category = category_span.root.lower_ if category_span is not None else ""
    skips = [in_parentheses(d) for d in docs]
    passage = [
        (k, s.text)
        for d, p in zip(docs, skips, strict=True)
        for s, k, _ in values_of(d, p, known, country)
    ]
    facts: list[Fact] = []
    for index, doc in enumerate(docs):
        subject = _about_subject(doc, index, name, category)
        if subject is None:
            continue
        values = values_of(doc, {t.i for t in subject.subtree} | skips[index], known, country)
        for value in values:
            fact = _fact(doc, index, subject, phrase, [value], passage)
            if fact is not None:
                facts.append(fact)
        pair = _pair(values)
        fact = _fact(doc, index, subject, phrase, pair, passage) if pair else None
        if fact is not None:
            facts.append(fact)
    return facts


def _pair(values: list[tuple[Span, str, str]]) -> list[tuple[Span, str, str]]:
    """The sentence's first two values of different kinds (or two spans of years) that
    do not overlap."""
    for i, (a, ka, _) in enumerate(values):
        for j in range(i + 1, len(values)):
            b, kb, _ = values[j]
            apart = a.end <= b.start or b.end <= a.start
            if apart and (
                ka != kb or (ka == "date" and _SPAN.search(a.text) and _SPAN.search(b.text))
            ):
                return [values[i], values[j]]
    return []


def _fact(
    doc: Doc,
    index: int,
    subject: Token,
    phrase: str,
    chosen: list[tuple[Span, str, str]],
    passage: list[tuple[str, str]],
) -> Fact | None:
    claim = realize(doc, subject, phrase, [s for s, _, _ in chosen])
    if claim is None:
        return None
    spans = []
    for span, kind, _ in chosen:
        text = span.text
        at = claim.find(text)
        if at < len(phrase) or claim.find(text, at + 1) >= 0:
            return None
        spans.append((at, at + len(text), kind))
    span, kind, label = chosen[0]
    shape = "two_parts" if len(chosen) > 1 else _shape(span, kind, passage)
    start, end, _ = spans[0]
    return Fact(index, kind, span.text, claim, start, end, shape, label, tuple(spans[1:]))
