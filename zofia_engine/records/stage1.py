"""Stage-1 data model: what entity-guided retrieval hands to Stage 2.

Plain typed records (pydantic) that round-trip through JSON unchanged.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .notes import Note

__all__ = [
    "Entity",
    "Keyword",
    "Mention",
    "SourceStatus",
    "Stage1Result",
    "WebResult",
    "WikiCandidate",
    "WikipediaEntry",
]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Mention(_Record):
    """One occurrence of an entity unit in the text (character offsets)."""

    start: int
    end: int
    sentence: int
    confidence: float


class Entity(_Record):
    """An entity after aggregation (eq. 2), thresholding and variant merging."""

    text: str
    label: str
    confidence: float
    variants: list[str]
    mentions: list[Mention]
    salience: float = 0.0
    local_salience: float = 0.0
    global_salience: float = 0.0
    context_sentence: int = 0


class Keyword(_Record):
    """A keyword chosen by SC-MMR, in selection order."""

    text: str
    label: str
    salience: float
    mmr_score: float
    lambda_k: float


class WebResult(_Record):
    """One open-web hit: its snippet and page description form the corpus."""

    title: str
    url: str
    snippet: str
    description: str = ""
    published: dt.date | None = None
    source: str
    query: Literal["main", "counter", "planned"] = "main"


class WikiCandidate(_Record):
    """One candidate sense of a keyword, as a Wikipedia backend returns it."""

    title: str
    url: str
    description: str
    extract: str


class WikipediaEntry(_Record):
    """The sense chosen for a keyword (eq. 7) and the first sentences of its summary."""

    keyword: str
    title: str
    url: str
    text: str
    description: str
    score: float
    candidates: list[str]
    source: str


class SourceStatus(_Record):
    """How one retrieval source fared in this run."""

    name: str
    status: Literal["ok", "empty", "failed", "disabled", "skipped"]
    detail: str = ""
    results: int = 0
    elapsed_ms: float = 0.0


class Stage1Result(_Record):
    """Everything Stage 1 produced for one post."""

    entities: list[Entity]
    threshold: float | None
    keywords: list[Keyword]
    query: str
    counter_query: str = ""
    #: the post's language as detected (ISO 639-1), the web search's language hint
    language: str = ""
    mode: Literal["live", "paper"] = "live"
    web: list[WebResult]
    wikipedia: list[WikipediaEntry]
    sources: list[SourceStatus]
    timings_ms: dict[str, float]
    notes: list[Note] = []

    @property
    def degraded(self) -> list[str]:
        """What did not go to plan, in words (the notes' texts)."""
        return [n.text for n in self.notes]
