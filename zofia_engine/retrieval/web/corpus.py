"""A local archive as an open-web backend: SQLite FTS5 with BM25 ranking, offline.

A newsroom's or a tipline's own checks are indexed once (``zofia corpus index``)
into one SQLite file; :class:`CorpusSearch` then answers eq. 6 from it. Every
keyword is quoted as an FTS5 string, so a post's text is never read as query
syntax. An archive is small, so when the conjunction of all keywords finds fewer
than ``max_results`` documents, the list is filled from the disjunction of the
same terms (BM25-ranked, no document twice): a near miss from one's own archive
is still better evidence than nothing.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ...config import WebSettings
from ...errors import ConfigError, SourceResponseError
from ...records.stage1 import WebResult
from .base import SearchBackend, WebQuery, admit

__all__ = ["CorpusSearch", "index_corpus", "match_terms"]

FORMAT = "zofia-corpus-1"
TEXT_SUFFIXES = (".txt", ".md")
TITLE_WEIGHT = 3.0  # bm25() column weights: a term in the title counts three times
SNIPPET_TOKENS = 40
DESCRIPTION_CHARS = 300
MAX_TERMS = 32
MAX_TERM_CHARS = 500
SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('format', '{FORMAT}');
CREATE TABLE documents (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, url TEXT NOT NULL, published TEXT
);
CREATE VIRTUAL TABLE documents_fts USING fts5(
    title, text, tokenize = 'unicode61 remove_diacritics 2'
);
"""
SEARCH_SQL = f"""
SELECT d.id, d.url, d.published, f.title,
       snippet(documents_fts, 1, '', '', '…', {SNIPPET_TOKENS}), substr(f.text, 1, ?)
FROM documents_fts AS f JOIN documents AS d ON d.rowid = f.rowid
WHERE documents_fts MATCH ? ORDER BY bm25(documents_fts, {TITLE_WEIGHT}, 1.0)
"""

Document = tuple[str, str, str, str, str | None]  # id, title, text, url, ISO date


def index_corpus(source: Path, database: Path, *, replace: bool = False) -> int:
    """Index the documents of ``source`` into a new SQLite FTS5 file at ``database``.

    Args:
        source: a JSONL file (one object a line: ``id`` and ``text``, optional
            ``title``, ``url`` and ISO ``date``), or a folder whose ``*.jsonl``
            files are read the same way and whose ``*.txt`` / ``*.md`` files are
            one document each (id: the relative path; title: the first line).
        database: the index file to write (readable by its owner only).
        replace: overwrite an existing index; the old one stays until the new
            one is complete.

    Returns:
        How many documents were indexed.

    Raises:
        ConfigError: ``database`` exists and ``replace`` is false, the source is
            missing or holds no documents, a line is malformed (the message names
            the file and line), or this Python's SQLite lacks FTS5.
    """
    if database.exists() and not replace:
        raise ConfigError(f"{database} already exists (replace it with --replace)")
    if not source.exists():
        raise ConfigError(f"{source} does not exist")
    _require_fts5()
    fd, tmp = tempfile.mkstemp(prefix=".corpus-", suffix=".tmp", dir=database.parent)
    os.close(fd)
    try:
        with closing(sqlite3.connect(tmp)) as db:
            db.executescript(SCHEMA)
            count = _insert(db, _documents(source))
            db.commit()
        if count == 0:
            raise ConfigError(f"{source}: no documents found (.jsonl, .txt or .md)")
        os.replace(tmp, database)
    except sqlite3.Error as exc:
        raise ConfigError(f"{database}: cannot write the index ({exc})") from exc
    finally:
        Path(tmp).unlink(missing_ok=True)
    return count


class CorpusSearch(SearchBackend):
    """BM25 search over an index made by :func:`index_corpus`, opened read-only.

    Args:
        path: the index file.

    Raises:
        ConfigError: the path is empty, missing, or not a corpus index.
    """

    name = "web:corpus"
    local = True

    def __init__(self, path: str | Path) -> None:
        if not str(path).strip():
            raise ConfigError("web.corpus.path is empty (make an index with `zofia corpus index`)")
        file = Path(path).expanduser()
        if not file.is_file():
            raise ConfigError(f"web.corpus.path: {file} not found (run `zofia corpus index`)")
        self._uri = file.resolve().as_uri() + "?mode=ro"
        try:
            with closing(self._connect()) as db:
                found = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.Error:
            found = None
        if found is None or found[0] != FORMAT:
            raise ConfigError(f"web.corpus.path: {file} is not an index made by zofia corpus index")

    @classmethod
    def from_settings(cls, web: WebSettings) -> CorpusSearch:
        """The backend over ``web.corpus.path``."""
        return cls(web.corpus.path)

    async def search(self, query: WebQuery) -> list[WebResult]:
        """The conjunction of the keywords, BM25-ranked, then the disjunction as a fill.

        Args:
            query: the keywords, result budget, cutoff and excluded domains; when
                ``any_of`` is set, one of its terms is required in both rounds.

        Returns:
            At most ``query.max_results`` documents, none from an excluded domain
            and none dated after the cutoff (undated documents are kept).

        Raises:
            SourceResponseError: the index could not be read.
        """
        terms = match_terms(query.keywords, query.exact)
        if query.max_results <= 0 or not terms:
            return []
        expressions = [" AND ".join(terms)] + ([" OR ".join(terms)] if len(terms) > 1 else [])
        options = match_terms(query.any_of)
        if options:  # one of them required in both: "(a AND b) AND (hoax OR debunked)"
            expressions = [f"({e}) AND ({' OR '.join(options)})" for e in expressions]
        return await asyncio.to_thread(self._search, expressions, query)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self._uri, uri=True)

    def _search(self, expressions: list[str], query: WebQuery) -> list[WebResult]:
        try:
            with closing(self._connect()) as db:
                return admit(self._ranked(db, expressions), query)
        except sqlite3.Error as exc:
            raise SourceResponseError(self.name, f"cannot read the index: {exc}") from exc

    def _ranked(self, db: sqlite3.Connection, expressions: list[str]) -> Iterator[WebResult]:
        """Each expression's matches in BM25 order, lazily, no document twice."""
        seen: set[str] = set()
        for expression in expressions:
            for row in db.execute(SEARCH_SQL, (DESCRIPTION_CHARS + 1, expression)):
                if row[0] not in seen:
                    seen.add(row[0])
                    yield _to_result(row)


def match_terms(keywords: tuple[str, ...] | list[str], exact: bool = True) -> list[str]:
    """The keywords as FTS5 strings: one phrase per keyword (``exact``) or per word.

    Double quotes are doubled and control characters blanked, so nothing a post
    says can become an FTS5 operator; terms without a letter or digit are left out
    (an empty phrase would match nothing and void the conjunction).
    """
    pieces = list(keywords) if exact else [w for k in keywords for w in k.split()]
    terms: list[str] = []
    for piece in pieces:
        text = "".join(" " if ord(c) < 32 else c for c in piece).strip()
        if len(text) > MAX_TERM_CHARS:
            text = text[:MAX_TERM_CHARS].rsplit(" ", 1)[0]
        term = '"' + text.replace('"', '""') + '"'
        if any(c.isalnum() for c in text) and term not in terms:
            terms.append(term)
    return terms[:MAX_TERMS]


def _to_result(row: tuple[Any, ...]) -> WebResult:
    doc_id, url, published, title, snippet, text = row
    description = " ".join(str(text)[:DESCRIPTION_CHARS].split())
    if len(text) > DESCRIPTION_CHARS:  # cut at a word, and say so
        description = description.rsplit(" ", 1)[0] + " …"
    return WebResult(
        title=title,
        # search_all keeps the first result per URL, so an address-less document
        # gets one of its own.
        url=url or "corpus:" + quote(doc_id, safe="/"),
        snippet=" ".join(str(snippet).split()),
        description=description,
        published=dt.date.fromisoformat(published) if published else None,
        source=CorpusSearch.name,
    )


def _require_fts5() -> None:
    try:
        with closing(sqlite3.connect(":memory:")) as db:
            db.execute("CREATE VIRTUAL TABLE probe USING fts5(text)")
    except sqlite3.OperationalError as exc:
        raise ConfigError(
            f"this Python's SQLite {sqlite3.sqlite_version} has no FTS5; "
            "a corpus index needs a build with FTS5 enabled"
        ) from exc


def _insert(db: sqlite3.Connection, documents: Iterator[tuple[str, Document]]) -> int:
    where: dict[str, str] = {}
    for place, (doc_id, title, text, url, date) in documents:
        if doc_id in where:
            raise ConfigError(f"{place}: duplicate id {doc_id!r} (first at {where[doc_id]})")
        where[doc_id] = place
        cursor = db.execute(
            "INSERT INTO documents (id, url, published) VALUES (?, ?, ?)", (doc_id, url, date)
        )
        db.execute(
            "INSERT INTO documents_fts (rowid, title, text) VALUES (?, ?, ?)",
            (cursor.lastrowid, title, text),
        )
    return len(where)


def _documents(source: Path) -> Iterator[tuple[str, Document]]:
    """Each document with where it came from (``file:line`` or the file)."""
    if source.is_file():
        yield from _jsonl(source)
        return
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        if path.suffix == ".jsonl":
            yield from _jsonl(path)
        elif path.suffix in TEXT_SUFFIXES:
            yield str(path), _text_file(path, path.relative_to(source).as_posix())


def _text_file(path: Path, doc_id: str) -> Document:
    try:
        content = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read as UTF-8 text ({exc})") from exc
    first, _, rest = content.partition("\n")
    title = first.lstrip("#").strip()[:200] or path.name
    return doc_id, title, rest.strip() or content, "", None


def _jsonl(path: Path) -> Iterator[tuple[str, Document]]:
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, 1):
            place = f"{path}:{number}"
            try:
                line = raw.decode("utf-8").strip()
                item = json.loads(line) if line else None
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ConfigError(f"{place}: not a JSON line ({exc})") from exc
            if item is not None:
                yield place, _document(item, place)


def _document(item: object, place: str) -> Document:
    if not isinstance(item, dict):
        raise ConfigError(f"{place}: expected a JSON object")
    doc_id = item.get("id")
    if isinstance(doc_id, bool) or not isinstance(doc_id, str | int) or not str(doc_id).strip():
        raise ConfigError(f"{place}: 'id' must be a non-empty string or a number")
    fields = {}
    for key in ("title", "text", "url", "date"):
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{place}: {key!r} must be a string")
        fields[key] = (value or "").strip()
    if not fields["text"] and not fields["title"]:
        raise ConfigError(f"{place}: 'text' is missing or empty")
    date = None
    if fields["date"]:
        try:
            date = dt.date.fromisoformat(fields["date"][:10]).isoformat()
        except ValueError as exc:
            raise ConfigError(f"{place}: 'date' {fields['date']!r} is not an ISO date") from exc
    return str(doc_id).strip(), fields["title"], fields["text"], fields["url"], date
