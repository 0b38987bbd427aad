"""Entity extractor (paper §3.1, eq. 2, Algorithm 2).

Tagged tokens become entity units (consecutive tokens of one entity, with the
mean token confidence, eq. 2); a dynamic confidence threshold keeps the
confident ones (Algorithm 2); surface variants of one name are merged.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..records.stage1 import Entity, Mention
from .ner.base import TaggedToken

__all__ = [
    "EntityUnit",
    "aggregate_units",
    "clean_units",
    "merge_variants",
    "select_by_dynamic_threshold",
]


@dataclass(frozen=True)
class EntityUnit:
    """Consecutive entity tokens taken together (the paper's ``U_e``)."""

    text: str
    label: str
    start: int
    end: int
    confidence: float
    n_tokens: int


def aggregate_units(tokens: Sequence[TaggedToken], text: str) -> list[EntityUnit]:
    """Group consecutive tokens of one entity into units; eq. 2 averages their scores.

    A token continues the current unit when it directly follows it in the token
    sequence with the same label and either is tagged inside (``I-``) or is a
    word piece glued to the previous token (no gap in the text).
    """
    units: list[EntityUnit] = []
    group: list[TaggedToken] = []

    def flush() -> None:
        if group:
            start, end = group[0].start, group[-1].end
            scores = [t.score for t in group]
            units.append(
                EntityUnit(
                    text=text[start:end],
                    label=group[0].label,
                    start=start,
                    end=end,
                    confidence=sum(scores) / len(scores),
                    n_tokens=len(group),
                )
            )
            group.clear()

    for tok in sorted(tokens, key=lambda t: t.index):
        if group:
            prev = group[-1]
            follows = tok.index == prev.index + 1 and tok.label == prev.label
            if follows and (not tok.begins or tok.start == prev.end):
                group.append(tok)
                continue
            flush()
        group.append(tok)
    flush()
    return units


# Characters that never occur inside a name: a span holding one is a tagging slip
# of the small model on headlines and quotes ("Trump Shocks Hollywood-, Speaks Out").
_NOT_IN_NAMES = set(':;?!"“”«»\n\r\t|')
_EDGE = " \t\r\n'\"“”‘’«»()[]{}-–—,.:;!?*#"


def clean_units(units: Sequence[EntityUnit], text: str, *, max_tokens: int = 8) -> list[EntityUnit]:
    """Trim quotes and dashes off unit edges and drop spans that cannot be names.

    Dropped: spans over ``max_tokens`` tokens, spans holding sentence
    punctuation or quotes, and spans with a comma over four tokens (a list
    or a clause, not "Washington, D.C.").
    """
    kept = []
    for unit in units:
        start, end = unit.start, unit.end
        while start < end and text[start] in _EDGE:
            start += 1
        while end > start and text[end - 1] in _EDGE and text[end - 1] != ".":
            end -= 1
        end = start + _name_prefix(text[start:end])
        if text[start:end].endswith(("'s", "’s")):  # possessive: "Bourdain’s"
            end -= 2
        name = text[start:end]
        if not any(c.isalnum() for c in name) or unit.n_tokens > max_tokens:
            continue
        if _NOT_IN_NAMES & set(name) or ("," in name and unit.n_tokens > 4):
            continue
        kept.append(EntityUnit(name, unit.label, start, end, unit.confidence, unit.n_tokens))
    return kept


# Punctuation that never ends a name ("Washington," at a clause break).
_EDGE_WORDS = ",;:"
# Lower-case words that do occur inside names ("Bank of America", "Osama bin Laden").
_CONNECTORS = frozenset(
    [
        "of",
        "the",
        "and",
        "for",
        "on",
        "in",
        "de",
        "del",
        "della",
        "der",
        "des",
        "di",
        "du",
        "da",
        "dos",
        "la",
        "le",
        "van",
        "von",
        "bin",
        "al",
        "el",
        "y",
        "et",
    ]
)


def _name_prefix(span: str) -> int:
    """Length of the part of ``span`` that reads as a name.

    The small tagger sometimes runs a name into the rest of its clause
    ("Emmanuel Macron met her at the Elysee."): the name ends before the first
    word with no capital or digit that is not a connector, and a sentence's
    full stop is not part of it (an abbreviation's is: "D.C.", "U.S.").
    """
    end = 0
    for match in re.finditer(r"\S+", span):
        word = match.group()
        bare = word.strip(".,")
        if not (any(c.isupper() or c.isdigit() for c in bare) or bare.lower() in _CONNECTORS):
            break
        end = match.end()
    name = span[:end].rstrip()
    while name and (name[-1] in _EDGE_WORDS or name.split()[-1].lower() in _CONNECTORS):
        name = name[:-1].rstrip() if name[-1] in _EDGE_WORDS else name.rsplit(None, 1)[0]
        if len(name.split()) == 1 and name.lower() in _CONNECTORS:
            return 0
    last = name.split()[-1] if name.split() else ""
    if last.endswith(".") and "." not in last[:-1] and len(last) > 3:
        name = name[:-1]
    return len(name)


def select_by_dynamic_threshold(
    units: Sequence[EntityUnit],
    *,
    initial: float = 0.8,
    step: float = 0.1,
    floor: float = 0.1,
    min_entities: int = 1,
) -> tuple[list[EntityUnit], float | None]:
    """Algorithm 2: lower the threshold from ``initial`` by ``step`` until enough pass.

    "Enough" is ``min_entities`` distinct names (the paper's ``n_min``; its
    Appendix uses one). The threshold never goes below ``floor``.

    Returns:
        The units at or above the threshold, and the threshold used
        (``None`` when NER found nothing: the paper returns the empty set).
    """
    if not units:
        return [], None
    threshold = initial
    selected: list[EntityUnit] = []
    # Thresholds are compared with a small tolerance: 0.8 - 7 * 0.1 is 0.0999...
    while threshold >= floor - 1e-9:
        selected = [u for u in units if u.confidence >= threshold - 1e-9]
        if len({normalize_name(u.text) for u in selected}) >= min_entities:
            return selected, round(threshold, 6)
        threshold -= step
    return selected, round(threshold + step, 6)


_PUNCT = re.compile(r"[^\w\s]")
_SPACE = re.compile(r"\s+")


def normalize_name(name: str) -> str:
    """Case, accents, possessives, a leading article and punctuation do not matter."""
    name = unicodedata.normalize("NFKD", name)
    name = "".join(c for c in name if not unicodedata.combining(c)).casefold()
    name = re.sub(r"['’]s\b", "", name)
    name = _PUNCT.sub(" ", name)
    name = _SPACE.sub(" ", name).strip()
    if name.startswith("the "):
        name = name[4:]
    return name


def _sentence_of(start: int, sentence_starts: list[int]) -> int:
    return max(0, bisect.bisect_right(sentence_starts, start) - 1)


def merge_variants(
    units: Sequence[EntityUnit], sentences: Sequence[tuple[int, int]]
) -> list[Entity]:
    """Merge the mentions of one name into one entity.

    Units with the same normalised name are one entity ("the White House",
    "White House"). A person named by part of a longer person name ("Biden",
    "Joe Biden") joins it when exactly one longer name fits, so "Clinton" stays
    apart when both "Bill Clinton" and "Hillary Clinton" occur. The canonical
    text is the most frequent surface form of the longest variant; the label is
    the most frequent one; the confidence is the best mention's.
    """
    groups: dict[str, list[EntityUnit]] = defaultdict(list)
    for unit in units:
        key = normalize_name(unit.text)
        if key:
            groups[key].append(unit)
    parent = _person_parents(groups)
    merged: dict[str, list[EntityUnit]] = defaultdict(list)
    for key, members in groups.items():
        merged[_root(key, parent)].extend(members)
    starts = [s for s, _ in sentences]
    entities = [_entity(groups[key], members, starts) for key, members in merged.items()]
    entities.sort(key=lambda e: e.mentions[0].start)
    return entities


def _person_parents(groups: dict[str, list[EntityUnit]]) -> dict[str, str]:
    """Each partial person name → the single longer person name it belongs to."""

    def label_of(key: str) -> str:
        return Counter(u.label for u in groups[key]).most_common(1)[0][0]

    people = [k for k in groups if label_of(k) == "PER"]
    parent: dict[str, str] = {}
    for key in people:
        words = key.split()
        longer = [
            other
            for other in people
            if len(other.split()) > len(words) and _is_part(words, other.split())
        ]
        if len(longer) == 1:
            parent[key] = longer[0]
    return parent


def _root(key: str, parent: dict[str, str]) -> str:
    seen = set()
    while key in parent and key not in seen:
        seen.add(key)
        key = parent[key]
    return key


def _entity(own: list[EntityUnit], members: list[EntityUnit], starts: list[int]) -> Entity:
    """One merged entity: named by its own most frequent surface form, labelled by its
    members' most frequent label, as confident as its best mention."""
    text = Counter(u.text for u in own).most_common(1)[0][0]
    mentions = sorted(
        (
            Mention(
                start=u.start,
                end=u.end,
                sentence=_sentence_of(u.start, starts),
                confidence=round(u.confidence, 6),
            )
            for u in members
        ),
        key=lambda m: m.start,
    )
    return Entity(
        text=text,
        label=Counter(u.label for u in members).most_common(1)[0][0],
        confidence=round(max(u.confidence for u in members), 6),
        variants=sorted({u.text for u in members} - {text}),
        mentions=mentions,
    )


def _is_part(words: list[str], longer: list[str]) -> bool:
    """``words`` is a prefix or a suffix of ``longer`` ("Biden" of "Joe Biden")."""
    n = len(words)
    return longer[:n] == words or longer[-n:] == words
