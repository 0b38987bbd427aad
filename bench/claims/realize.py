"""A sentence cut down to what states some of its values, with its subject renamed.

What is kept (:func:`realize`):

* the subject, written as the article names it ("The Nile", "Angela Merkel"), in
  place of the sentence's own subject words ("Angela Dorothea Merkel", "It");
* the main verb with its auxiliaries and negation, and every word on the parse's path
  from the verb down to each value;
* the words that say which thing each kept word is: determiners, possessives,
  compounds, adjectives (with their "most"), numbers, "of" phrases of nouns; a kept
  verb's object or complement, its "as" phrase ("served as Prime Minister of the
  United Kingdom"), a relative pronoun ("who served");
* a value in a list ("France, Spain and Andorra") keeps the whole list, with its commas
  and "and".

Appositions, clauses and phrases off the path, other conjuncts and parentheses go. A
path through a clause that only joins another ("…, and became …", "…, which …" off a
verb) is not followed: the result would not be a sentence. What is left is a
statement the sentence entails, every word of it but the subject a word of the
sentence.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from spacy.tokens import Doc, Span, Token

__all__ = [
    "MAX_WORDS",
    "MIN_WORDS",
    "in_parentheses",
    "list_of",
    "realize",
    "root_of",
    "well_formed",
]

SUBJECTS = ("nsubj", "nsubjpass")
# The dependencies a path from the verb down to a value may follow.
_PATH = frozenset(
    [
        "prep",
        "pobj",
        "dobj",
        "attr",
        "acomp",
        "agent",
        "relcl",
        "acl",
        "compound",
        "amod",
        "nummod",
        "poss",
        "npadvmod",
        "nmod",
        "oprd",
        "xcomp",
        "pcomp",
        "conj",
        "quantmod",
        "advmod",
        "nsubj",
        "nsubjpass",
        "dative",
    ]
)
# Children that say which thing a kept word is.
_WHICH = frozenset(
    [
        "det",
        "poss",
        "compound",
        "amod",
        "nummod",
        "neg",
        "aux",
        "auxpass",
        "case",
        "prt",
        "quantmod",
        "predet",
        "nmod",
    ]
)
# A kept verb's children that complete what it says.
_COMPLETES = frozenset(["dobj", "attr", "acomp", "oprd", "agent", "xcomp"])
_SMALL_END = frozenset(
    [
        "and",
        "or",
        "of",
        "the",
        "a",
        "an",
        "to",
        "in",
        "by",
        "as",
        "with",
        "for",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "that",
        "which",
        "who",
    ]
)
MIN_WORDS, MAX_WORDS = 5, 32
# Verbs whose "as" phrase says what the subject was ("served as Prime Minister").
_AS_VERBS = frozenset(["serve", "act", "work", "rule", "reign", "function", "hold"])


def root_of(doc: Doc) -> Token | None:
    """The sentence's main verb; ``None`` when the parse finds none, or several
    sentences."""
    roots = [t for t in doc if t.dep_ == "ROOT"]
    return roots[0] if len(roots) == 1 else None


def in_parentheses(doc: Doc) -> set[int]:
    """The indices of the words inside parentheses, the parentheses included."""
    inside: set[int] = set()
    depth = 0
    for t in doc:
        if t.text in ("(", "["):
            depth += 1
        if depth:
            inside.add(t.i)
        if t.text in (")", "]"):
            depth = max(0, depth - 1)
    return inside


def list_of(token: Token) -> list[Token]:
    """The members of the list of three or more ``token`` is in ("France, Spain and
    Andorra"), in order; ``[]`` when it is in none."""
    head = token
    while head.dep_ == "conj" and head.head.i != head.i:
        head = head.head
    members, frontier = [head], [head]
    while frontier:
        at = frontier.pop()
        for c in at.children:
            if c.dep_ == "conj":
                members.append(c)
                frontier.append(c)
    return sorted(members, key=lambda t: t.i) if len(members) >= 3 else []


def _path(token: Token, root: Token) -> list[Token] | None:
    """The words from ``token`` up to ``root``; ``None`` when the path leaves the kinds
    of link a cut sentence can keep (a verb joined to another by "and", an adverbial
    clause)."""
    path, at = [], token
    while at.i != root.i:
        if at.dep_ not in _PATH:
            return None
        if at.dep_ == "conj" and at.pos_ in ("VERB", "AUX"):
            return None
        path.append(at)
        if at.head.i == at.i:
            return None
        at = at.head
    return path


def _grow(doc: Doc, keep: set[int]) -> None:
    """Add to ``keep`` the words that say which thing each kept word is, and what a
    kept verb needs to say what it says, until nothing changes."""
    frontier = list(keep)
    while frontier:
        t = doc[frontier.pop()]
        verb = t.pos_ in ("VERB", "AUX")
        for c in t.children:
            if c.i in keep:
                continue
            wanted = c.dep_ in _WHICH and not (c.dep_ == "amod" and c.i > t.i)
            wanted |= c.dep_ == "advmod" and t.dep_ == "amod" and c.tag_ in ("RBS", "RBR")
            wanted |= verb and c.dep_ in _COMPLETES
            wanted |= verb and c.dep_ == "prep" and c.lower_ == "as" and t.lemma_ in _AS_VERBS
            wanted |= t.dep_ in ("prep", "agent") and c.dep_ in ("pobj", "pcomp")
            wanted |= t.pos_ in ("NOUN", "PROPN") and c.dep_ == "prep" and c.lower_ == "of"
            wanted |= c.dep_ in SUBJECTS and c.tag_ in ("WP", "WDT")  # "who served"
            wanted |= _ranking(t)  # "the second largest", "the longest river in Africa"
            if wanted:
                keep.add(c.i)
                frontier.append(c.i)


def _ranks(t: Token) -> bool:
    """Whether ``t`` is a rank: a superlative ("largest", "most populous"), an ordinal,
    "only"."""
    most = any(c.dep_ == "advmod" and c.tag_ == "RBS" for c in t.children)
    return t.tag_ in ("JJS", "RBS") or t.ent_type_ == "ORDINAL" or t.lower_ == "only" or most


def _ranking(t: Token) -> bool:
    """Whether ``t`` ranks or is ranked by a word that does: every word under it is then
    the rank's scope ("the *second* largest city *in France*", "the first woman *to hold
    the office*") and stays."""
    return _ranks(t) or any(
        c.dep_ in ("amod", "advmod", "nummod") and _ranks(c) for c in t.children
    )


def _scoped(doc: Doc, keep: set[int]) -> bool:
    """Whether every kept rank keeps its scope: "the largest city" is false where "the
    largest city in Morocco" is true, so a superlative or an ordinal whose noun keeps no
    phrase (in, of, to …, a clause, a possessive) makes no claim."""
    for i in keep:
        t = doc[i]
        ranks = t.tag_ == "JJS" or t.ent_type_ == "ORDINAL" or t.lower_ == "most"
        if not ranks or t.dep_ not in ("amod", "advmod", "nummod"):
            continue
        noun = t.head if t.head.pos_ in ("NOUN", "PROPN") else t.head.head
        if not any(c.i in keep and _scope(c) for c in noun.children):
            return False
    return True


def _scope(c: Token) -> bool:
    """Whether ``c`` says where a rank holds ("in the world", "of the 20th century",
    "to hold the office", "Egypt's"), not what else the thing has ("with …")."""
    if c.dep_ == "prep":
        return c.lower_ in ("in", "of", "on", "among", "within", "by", "to", "for", "since")
    return c.dep_ in ("acl", "relcl", "poss")


def _hyphens(doc: Doc, keep: set[int]) -> None:
    """Keep both sides of a hyphenated word ("gram-positive", "stand-up")."""
    changed = True
    while changed:
        changed = False
        for i in sorted(keep):
            for j, k in ((i - 1, i - 2), (i + 1, i + 2)):
                if not (min(j, k) >= 0 and max(j, k) < len(doc)) or doc[j].text != "-":
                    continue
                left = doc[min(j, k)]
                if left.whitespace_ == "" and doc[j].whitespace_ == "" and k not in keep:
                    keep |= {j, k}
                    changed = True


def _joined(doc: Doc, keep: set[int]) -> None:
    """Keep the "and" (and the commas) that join kept conjuncts to their head."""
    for i in sorted(keep):
        t = doc[i]
        if t.dep_ != "conj" or t.head.i not in keep:
            continue
        for j in range(t.head.i + 1, t.i):
            if doc[j].dep_ == "cc" or (doc[j].is_punct and doc[j].text == ","):
                keep.add(j)


def _unfinished(doc: Doc, keep: set[int]) -> None:
    """Drop a kept preposition with nothing kept under it ("the process of.")."""
    for i in sorted(keep):
        t = doc[i]
        if t.dep_ == "prep" and not any(c.i in keep for c in t.children):
            keep.discard(i)


def realize(doc: Doc, subject: Token, phrase: str, values: Sequence[Span]) -> str | None:
    """``doc`` cut down to what states ``values`` of ``subject`` (see the module's
    docstring), the subject written as ``phrase``; ``None`` when that is not a sentence
    of a fair length."""
    root = root_of(doc)
    if root is None:
        return None
    keep = {root.i}
    for span in values:
        members = list_of(span.root)
        for t in [span.root, *members]:
            path = _path(t, root)
            if path is None:
                return None
            keep |= {p.i for p in path}
        keep |= {t.i for t in span} | {m.i for m in members}
        keep |= {t.i for m in members for t in _entity(doc, m)}
    _grow(doc, keep)
    _hyphens(doc, keep)
    _joined(doc, keep)
    _unfinished(doc, keep)
    if not _scoped(doc, keep):
        return None
    dropped = {t.i for t in subject.subtree} | in_parentheses(doc)
    if any(t.i in dropped for s in values for t in s) or min(keep) < subject.left_edge.i:
        return None
    return _written(doc, keep, dropped, subject, phrase)


def _entity(doc: Doc, token: Token) -> list[Token]:
    """The words of the entity ``token`` is in, or ``token`` alone."""
    return next((list(e) for e in doc.ents if e.start <= token.i < e.end), [token])


def _written(
    doc: Doc, keep: set[int], dropped: set[int], subject: Token, phrase: str
) -> str | None:
    out: list[str] = []
    last = -2
    for t in doc:
        if t.i == subject.left_edge.i:
            out.append((" " if out else "") + phrase)
            last = subject.right_edge.i
            continue
        if t.i in dropped or t.i not in keep:
            continue
        if t.is_punct and t.text not in (",", "-", "–", "'"):
            continue
        glue = doc[t.i - 1].whitespace_ if last == t.i - 1 else " "
        out.append(glue + t.text if out else t.text)
        last = t.i
    return _tidy("".join(out))


def _tidy(text: str) -> str | None:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,;:])", r"\1", text)
    text = re.sub(r",(\s*,)+", ",", text)
    text = re.sub(r"(\s*,)+\s*$", "", text).strip(" ,")
    words = re.findall(r"[\w'’-]+", text.casefold())
    if not MIN_WORDS <= len(words) <= MAX_WORDS or text.count('"') % 2:
        return None
    if words[-1] in _SMALL_END or any(a == b for a, b in itertools.pairwise(words)):
        return None
    return text[0].upper() + text[1:] + "."


def well_formed(doc: Doc) -> bool:
    """Whether a written claim parses as one sentence whose main verb has a subject that
    starts it, and no word the parser could not attach."""
    root = root_of(doc)
    if root is None or root.pos_ not in ("VERB", "AUX") or any(t.dep_ == "dep" for t in doc):
        return False
    subject = next((c for c in root.children if c.dep_ in SUBJECTS), None)
    return subject is not None and subject.left_edge.i == 0
