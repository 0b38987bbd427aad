"""The articles claims are generated from: the offline Wikipedia summaries the engine
ships, each cut to the sentences the engine shows as evidence, what kind of thing each
is about, which split it falls in, and the sentences parsed.

An article's split is a function of its title alone (:func:`split_of`): the first
byte of the SHA-256 of its normalised title, below 154 of 256 (60 %) for ``dev``, else
``test``. So every claim about one article falls in one split, whatever the seed, and a
value a false claim borrows from another article may come from either split (it is
only a value, never the subject).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from zofia_engine.config import EngineSettings
from zofia_engine.retrieval.ner.sentences import split_sentences
from zofia_engine.retrieval.wikipedia.offline import packaged_summaries
from zofia_engine.retrieval.wikipedia.titles import normalize_title, without_disambiguator

__all__ = ["Article", "Split", "articles", "kind_of", "split_of", "titles"]

Split = Literal["dev", "test"]
DEV_BELOW = 154  # of 256: 60 % of the articles are dev

# What an article is about, from its short description and topic (first match wins).
_KINDS: tuple[tuple[str, str, str], ...] = (
    # (kind, topic or "", a pattern of the description)
    (
        "landmark",
        "",
        r"\b(tower|bridge|palace|temple|cathedral|castle|monument|wall|canal|"
        r"building|stadium|museum|statue|pyramid|dam|mosque|church|fortress)\b",
    ),
    ("person", "People", r""),
    (
        "person",
        "",
        r"\(\d{3,4}\s*[–-]\s*\d{3,4}\)|\(born \d{4}\)|\b(painter|writer|poet|"
        r"composer|singer|actor|actress|philosopher|scientist|physicist|chemist|politician|"
        r"emperor|king|queen|president|novelist|playwright|mathematician|explorer)\b",
    ),
    (
        "species",
        "Biology and health sciences",
        r"\b(species|genus|family|order|class|"
        r"plant|animal|mammal|bird|fish|insect|tree|fungus|fungi|bacteri\w*|subspecies)\b",
    ),
    ("place", "Geography", r""),
    (
        "work",
        "Arts",
        r"\b(film|novel|painting|album|song|opera|play|poem|book|symphony|"
        r"ballet|sculpture|series|musical|epic|comic|video game|fresco|story)\b",
    ),
    (
        "event",
        "History",
        r"\b(war|battle|revolution|siege|massacre|crisis|treaty|"
        r"conflict|uprising|invasion|campaign|pandemic|disaster|genocide|conquest)\b",
    ),
    (
        "organisation",
        "",
        r"\b(company|corporation|organi[sz]ation|university|party|"
        r"agency|manufacturer|band|club|bank|church|order|dynasty|council|union|league)\b",
    ),
)


@dataclass(frozen=True)
class Article:
    """One article: its title, short description, the sentences the engine shows of it
    (``[wikipedia] sentences``, 3), its kind and its split."""

    title: str
    description: str
    sentences: tuple[str, ...]
    kind: str
    split: Split
    topic: str = ""

    @property
    def passage(self) -> str:
        return " ".join(self.sentences)

    @property
    def name(self) -> str:
        """The title without its disambiguator ("Mercury" for "Mercury (planet)")."""
        return without_disambiguator(self.title)


def kind_of(description: str, topic: str) -> str:
    """``person``, ``place``, ``species``, ``work``, ``event``, ``organisation``,
    ``landmark`` or ``concept``, from an article's description and topic."""
    for kind, on_topic, pattern in _KINDS:
        if on_topic and on_topic != topic:
            continue
        if not pattern or re.search(pattern, description, re.IGNORECASE):
            return kind
    return "concept"


def split_of(title: str) -> Split:
    """The split every claim about ``title`` falls in (see the module's docstring)."""
    digest = hashlib.sha256(normalize_title(title).encode("utf-8")).digest()
    return "dev" if digest[0] < DEV_BELOW else "test"


def _records() -> Iterator[dict[str, Any]]:
    data = json.loads(packaged_summaries().read_text("utf-8"))
    for key in sorted(data):
        record = data[key]
        if isinstance(record, dict) and (record.get("extract") or "").strip():
            yield record


def titles() -> list[str]:
    """The title of every article :func:`articles` gives, in its order, without cutting
    any article into sentences."""
    return [str(record.get("title") or "") for record in _records()]


def articles() -> list[Article]:
    """Every article with an extract, in title order, cut as the engine cuts it."""
    n = EngineSettings().wikipedia.sentences
    found = []
    for record in _records():
        title = str(record.get("title") or "")
        description = str(record.get("description") or "")
        sentences = tuple(split_sentences(str(record["extract"]).strip())[:n])
        topic = str(record.get("topic") or "")
        kind = kind_of(description, topic)
        found.append(Article(title, description, sentences, kind, split_of(title), topic))
    return found
