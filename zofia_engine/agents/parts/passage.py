"""Which evidence sentences may answer a claim, and which of their words may fill each
of its blanks.

A sentence may answer a claim only when it is about what the claim is about: it comes
from an article whose title names the claim's subject ("Sydney Opera House" for "The
Sydney Opera House is …"), or it names that subject itself. A sentence about a word of
the post is not about the post's claim: the article "Purple" says nothing about a
town's bridge being painted purple, and the article "Melbourne" nothing about where
the opera house stands. A generic subject ("Whales are …", "The tomato is …") is
matched by its head word; a specific one ("the mayor of Little Harwick", "the town's
bridge") is not matched by the generic article ("Mayor", "Bridge").

A blank's options are the sentence's words of a kind that can fill it: its places for a
place (and a run of them, "Sydney, New South Wales, Australia"), its people for a
creator, its dates for a date, its noun phrases' heads for a category.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ...retrieval.ner.parser import Parsed, Phrase
from ...retrieval.wikipedia.titles import is_sense_of
from .claim import EVERYWHERE, ClaimParts, Part, PartKind
from .names import name_key
from .phrases import RANK, with_phrases

__all__ = [
    "CONTRADICTS",
    "FILLERS",
    "Passage",
    "Source",
    "about_subject",
    "can_contradict",
    "choose_passage",
    "options_for",
]

#: The entity labels whose words may fill a part of each kind.
FILLERS: dict[PartKind, frozenset[str]] = {
    # The small model confuses these labels ("Málaga" as a person, "Rembrandt" as an
    # organisation): the claim's part decides how the two are compared.
    "place": frozenset({"GPE", "LOC", "FAC", "ORG", "PERSON"}),
    "person": frozenset({"PERSON", "ORG", "GPE"}),
    "organisation": frozenset({"ORG", "PERSON", "GPE"}),
    "nationality": frozenset({"NORP", "GPE", "LANGUAGE"}),
    "date": frozenset({"DATE"}),
    "number": frozenset({"CARDINAL", "QUANTITY", "MONEY", "PERCENT"}),
    "name": frozenset({"WORK_OF_ART", "EVENT", "PRODUCT", "LANGUAGE", "LAW", "ORG", "PERSON"}),
    "category": frozenset(),
    "ordinal": frozenset({"ORDINAL", RANK}),
}
MAX_OPTIONS = 10
#: Characters no option may hold: llama-cpp-python writes a JSON string with a quote or
#: a backslash in it into a grammar llama.cpp refuses.
_UNOFFERABLE = re.compile(r'["\\]')
#: The labels of a passage's words that can *contradict* a part of each kind: the
#: fillers above without the labels only a tagging error puts there ("France" cannot
#: contradict "Málaga" tagged as a person). A name (a work, an event, a law) is
#: contradicted only by a name of its own label.
CONTRADICTS: dict[PartKind, frozenset[str]] = {
    "place": frozenset({"GPE", "LOC", "FAC"}),
    "person": frozenset({"PERSON", "ORG"}),
    "organisation": frozenset({"ORG", "PERSON"}),
    "nationality": frozenset({"NORP", "GPE", "LANGUAGE"}),
    "date": frozenset({"DATE"}),
    "number": frozenset({"CARDINAL", "QUANTITY", "MONEY", "PERCENT"}),
    "name": frozenset(),
    "category": frozenset({"NP"}),
    "ordinal": frozenset({"ORDINAL", RANK}),
}


def can_contradict(part: Part, label: str) -> bool:
    """Whether a passage's words labelled ``label`` can contradict ``part``."""
    if part.kind == "name":
        return label == part.label
    return label in CONTRADICTS[part.kind]


@dataclass(frozen=True)
class Source:
    """One evidence sentence a claim may be read against: its document (id, title,
    whether it is an encyclopedia's), its text and its parse."""

    evidence_id: str
    title: str
    encyclopedic: bool
    text: str
    parsed: Parsed


@dataclass(frozen=True)
class Passage:
    """The sentences a claim is read against (best first: ``sources`` as
    (evidence id, text)) and, for each checked part in order, the words that may fill
    it and their labels."""

    sources: tuple[tuple[str, str], ...]
    options: tuple[tuple[str, ...], ...]
    labels: tuple[dict[str, str], ...] = ()  # per checked part: each option's label

    @property
    def text(self) -> str:
        return " ".join(t for _, t in self.sources)

    def source_of(self, words: str) -> tuple[str, str] | None:
        """The first sentence of the passage that holds ``words``, as (evidence id,
        text)."""
        return next((s for s in self.sources if words in s[1]), None)


def _keys(text: str) -> set[str]:
    """``text`` normalised, and with its last word singular ("black holes" → "black
    hole")."""
    key = name_key(text)
    words = key.split()
    if not words:
        return set()
    last = words[-1]
    single = last[:-3] + "y" if last.endswith("ies") else last[:-1] if last.endswith("s") else last
    return {key, " ".join([*words[:-1], single])}


def about_subject(
    claim: ClaimParts, title: str, sentence: str, *, encyclopedic: bool = True
) -> bool:
    """Whether a sentence of the document ``title`` is about ``claim``'s subject.

    An encyclopedia's article is about its title: its sentence is about the subject when
    the title is the subject ("Speed of light" for "the speed of light"), names it both
    ways (a named subject: "Sydney Opera House" for "The Sydney Opera House"), or is the
    kind a generic subject names ("Whale" for "Whales"), or when the sentence names a
    named subject itself. A page's title is a headline, and a page names its subject in
    its own words ("Mayor Misty Buscher" for "the mayor of Springfield"): its sentence
    is about the subject when it or the title has the subject's head word or one of its
    proper names."""
    if not claim.subject:
        return False
    keys, title_keys = _keys(claim.subject), _keys(title)
    if keys & title_keys:
        return True
    if not encyclopedic:
        words = set(name_key(f"{title} {sentence}").split())
        words |= {w[:-1] for w in words if w.endswith("s")}
        return claim.subject_head in words or any(n in words for n in claim.names)
    if claim.named:
        return name_key(claim.subject) in name_key(sentence) or (
            is_sense_of(claim.subject, title) and is_sense_of(title, claim.subject)
        )
    if claim.generic:
        return claim.subject_head in title_keys
    return False


def options_for(part: Part, parsed: Parsed, claim: ClaimParts) -> dict[str, str]:
    """The words of one parsed sentence that may fill ``part`` (none of them the
    claim's subject), each with its label (``"NP"`` for a category's head)."""
    subject = name_key(claim.subject)
    found: dict[str, str] = {}
    if part.kind == "category":
        found = dict.fromkeys(_heads(parsed), "NP")
    else:
        labels = FILLERS[part.kind]
        entities = [e for e in with_phrases(parsed) if e.label in labels]
        if part.kind == "place":
            found = {run: label for run, label in _runs(entities, parsed.text)}
        for e in entities:
            found.setdefault(e.text, e.label)
        # A place every place lies in ("the highest mountain on Earth") says nothing of
        # where the subject is: the sentence has no place for the blank.
        found = {t: label for t, label in found.items() if name_key(t) not in EVERYWHERE}
    # Words the claim itself uses in another role ("iPhone" in "Apple unveiled a new
    # iPhone in [1]") do not fill this part.
    elsewhere = name_key(claim.text[: part.start] + " | " + claim.text[part.end :])
    own = name_key(part.text)
    return {
        text: label
        for text, label in found.items()
        if (key := name_key(text))
        and not _UNOFFERABLE.search(text)
        and not _names_subject(key, subject)
        and text != _initials(claim.subject)
        and (key in own or f" {key} " not in f" {elsewhere} ")
    }


def _initials(name: str) -> str:
    """A name's acronym ("UN" for "the United Nations", "NASA" for "National
    Aeronautics and Space Administration"): its capitalised words' first letters."""
    return "".join(w[0] for w in name.split() if w[:1].isupper() and w.casefold() != "the")


def _names_subject(key: str, subject: str) -> bool:
    """Whether words name the claim's subject, whole or with more words ("Microsoft
    Corporation" for "Microsoft"); "Sydney" does not name "the Sydney Opera House"."""
    words, theirs = set(key.split()), set(subject.split())
    return bool(words and theirs) and theirs <= words


def _runs(entities: Sequence[Phrase], text: str) -> list[tuple[str, str]]:
    """Runs of places with only commas between them ("Sydney, New South Wales,
    Australia"), with the label of their first place."""
    runs: list[list[Phrase]] = []
    for e in entities:
        if runs and text[runs[-1][-1].end : e.start].strip() in (",",):
            runs[-1].append(e)
        else:
            runs.append([e])
    return [(text[r[0].start : r[-1].end], r[0].label) for r in runs if len(r) > 1]


def _heads(parsed: Parsed) -> list[str]:
    """Each noun phrase's head noun with the compounds before it ("arts centre")."""
    words, heads = parsed.words, []
    inside = {i for e in parsed.entities for i in range(e.first, e.last)}
    for chunk in parsed.chunks:
        root = chunk.root
        if root < 0 or words[root].pos != "NOUN" or root in inside:
            continue
        first = root
        while first > chunk.first and words[first - 1].dep == "compound":
            first -= 1
        heads.append(parsed.text[words[first].start : words[root].end])
    return heads


def choose_passage(
    claim: ClaimParts, sources: Sequence[Source], *, max_sentences: int = 3
) -> Passage | None:
    """The passage ``claim`` is read against: of ``sources`` (best first), those about
    its subject that hold words for at least one of its checked parts, at most
    ``max_sentences``; each blank may be filled only from the first of them that has
    words for it. ``None`` when there is none."""
    checked = claim.checked
    if not checked:
        return None
    chosen: list[tuple[Source, list[dict[str, str]]]] = []
    for source in sources:
        if not about_subject(claim, source.title, source.text, encyclopedic=source.encyclopedic):
            continue
        options = [options_for(part, source.parsed, claim) for part in checked]
        if any(options):
            chosen.append((source, options))
        if len(chosen) == max_sentences:
            break
    if not chosen:
        return None
    # Each blank's options come from the closest sentence that has any for it: the
    # others are context, not alternatives ("Sydney Harbour", where the opera house
    # stands on the foreshore, is not where the closest sentence says it is).
    labels = [
        dict(list(next((o[i] for _, o in chosen if o[i]), {}).items())[:MAX_OPTIONS])
        for i in range(len(checked))
    ]
    return Passage(
        tuple((s.evidence_id, s.text) for s, _ in chosen),
        tuple(tuple(found) for found in labels),
        tuple(labels),
    )
