"""The local-archive backend: indexing, BM25 search, safe queries, the CLI and settings."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from types import ModuleType
from typing import Any, TypedDict, Unpack

import pytest
from click.testing import CliRunner

from bots.cli import main
from zofia_engine.config import EngineSettings, load_config
from zofia_engine.errors import ConfigError
from zofia_engine.retrieval.web.base import WebQuery
from zofia_engine.retrieval.web.corpus import CorpusSearch, index_corpus, match_terms
from zofia_engine.retrieval.web.factory import build_search_backends

REPO_ROOT = Path(__file__).resolve().parents[3]

DOCS = [
    # The terms in the title: ranks first although the others repeat them in the text.
    {"id": "title", "title": "Zürich water prices", "text": "A note on the tariff.",
     "url": "https://archive.example.org/1", "date": "2023-03-01"},
    {"id": "text", "title": "Tariffs", "text": "Zurich said water prices rose; water, water.",
     "url": "https://archive.example.org/2", "date": "2023-06-01"},
    {"id": "water-only", "title": "Lake", "text": "The water of the lake is clean.",
     "url": "https://other.example.net/3"},
    {"id": "prices-only", "title": "Bread", "text": "Bread prices fell in spring.",
     "date": "2022-01-01"},
    {"id": "fall", "title": "Falls", "text": "The waterfall by the town dried up."},
]  # fmt: skip


def _jsonl(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


@pytest.fixture()
def index(tmp_path: Path) -> Path:
    database = tmp_path / "corpus.db"
    assert index_corpus(_jsonl(tmp_path / "docs.jsonl", DOCS), database) == len(DOCS)
    return database


class _QueryOptions(TypedDict, total=False):
    """``WebQuery``'s fields but the keywords."""

    exact: bool
    max_results: int
    cutoff: dt.date | None
    exclude_domains: tuple[str, ...]
    any_of: tuple[str, ...]
    language: str


async def _ids(database: Path, *keywords: str, **options: Unpack[_QueryOptions]) -> list[str]:
    results = await CorpusSearch(database).search(WebQuery(keywords, **options))
    assert all(r.source == "web:corpus" for r in results)
    return [r.url.rsplit("/", 1)[-1].removeprefix("corpus:") for r in results]


# ---------------------------------------------------------------------- indexing


def test_the_index_has_fts5_and_the_documents_table(index: Path) -> None:
    with closing(sqlite3.connect(index)) as db:
        tokenize = db.execute("SELECT sql FROM sqlite_master WHERE name = 'documents_fts'")
        assert "remove_diacritics 2" in tokenize.fetchone()[0]
        rows = db.execute("SELECT id, url, published FROM documents ORDER BY rowid").fetchall()
    assert rows[0] == ("title", "https://archive.example.org/1", "2023-03-01")
    assert rows[3] == ("prices-only", "", "2022-01-01")
    assert index.stat().st_mode & 0o077 == 0  # readable by its owner only


def test_a_folder_of_text_markdown_and_jsonl(tmp_path: Path) -> None:
    folder = tmp_path / "archive"
    (folder / "2023").mkdir(parents=True)
    (folder / "2023" / "flood.md").write_text("# Flood in Gdańsk\n\nThe river rose.", "utf-8")
    (folder / "notes.txt").write_text("Bridge closed\nThe bridge over the river shut.", "utf-8")
    (folder / "skip.csv").write_text("not,a,document", "utf-8")
    _jsonl(folder / "more.jsonl", [{"id": 7, "text": "A river cruise."}])
    database = tmp_path / "corpus.db"
    assert index_corpus(folder, database) == 3
    with closing(sqlite3.connect(database)) as db:
        found = db.execute(
            "SELECT d.id, f.title, f.text "
            "FROM documents AS d JOIN documents_fts AS f ON d.rowid = f.rowid"
        ).fetchall()
    assert set(found) == {
        ("2023/flood.md", "Flood in Gdańsk", "The river rose."),
        ("7", "", "A river cruise."),
        ("notes.txt", "Bridge closed", "The bridge over the river shut."),
    }


async def test_text_files_are_found_with_an_address_of_their_own(tmp_path: Path) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    (folder / "a.txt").write_text("Flood\nThe river rose.", "utf-8")
    (folder / "b.txt").write_text("Drought\nThe river fell.", "utf-8")
    index_corpus(folder, tmp_path / "c.db")
    results = await CorpusSearch(tmp_path / "c.db").search(WebQuery(("river",)))
    assert sorted(r.url for r in results) == ["corpus:a.txt", "corpus:b.txt"]
    assert {r.title for r in results} == {"Flood", "Drought"}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "x", "text": ', "not a JSON line"),
        ('["a list"]', "expected a JSON object"),
        ('{"text": "no id"}', "'id' must be"),
        ('{"id": "x", "text": ""}', "'text' is missing"),
        ('{"id": "x", "text": "t", "date": "last week"}', "not an ISO date"),
        ('{"id": "x", "text": "t", "url": 5}', "'url' must be a string"),
        ('{"id": "a", "text": "again"}', "duplicate id 'a'"),
    ],
)
def test_a_bad_line_is_named_by_its_number(tmp_path: Path, line: str, message: str) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text('{"id": "a", "text": "fine"}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        index_corpus(source, tmp_path / "corpus.db")
    assert f"{source}:3:" in str(info.value) and message in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl"]  # nothing left over


def test_an_existing_index_is_kept_unless_replaced(tmp_path: Path, index: Path) -> None:
    with pytest.raises(ConfigError, match="already exists"):
        index_corpus(_jsonl(tmp_path / "new.jsonl", DOCS[:1]), index)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.jsonl:1:"):
        index_corpus(bad, index, replace=True)
    with closing(sqlite3.connect(index)) as db:  # a failed rebuild leaves the old index whole
        assert db.execute("SELECT count(*) FROM documents").fetchone() == (len(DOCS),)
    assert index_corpus(tmp_path / "new.jsonl", index, replace=True) == 1


def test_an_empty_source_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no documents"):
        index_corpus(tmp_path / "empty", tmp_path / "corpus.db")
    assert not (tmp_path / "corpus.db").exists()


def test_the_backend_refuses_a_file_that_is_not_an_index(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    other.write_text("plain text", encoding="utf-8")
    with pytest.raises(ConfigError, match="not an index"):
        CorpusSearch(other)
    with pytest.raises(ConfigError, match="zofia corpus index"):
        CorpusSearch(tmp_path / "missing.db")
    with pytest.raises(ConfigError, match=r"web\.corpus\.path is empty"):
        CorpusSearch("")


# ----------------------------------------------------------------------- search


async def test_bm25_puts_the_terms_in_the_title_first(index: Path) -> None:
    ids = await _ids(index, "zurich", "water", "prices", max_results=2)
    assert ids == ["1", "2"]


async def test_the_conjunction_comes_first_then_an_or_fill(index: Path) -> None:
    # Only "1" and "2" have both terms; the fill brings the rest, each once.
    ids = await _ids(index, "water", "prices", max_results=10)
    assert ids[:2] == ["1", "2"]
    assert sorted(ids[2:]) == ["3", "prices-only"]
    assert len(ids) == len(set(ids))
    assert await _ids(index, "water", "prices", max_results=2) == ["1", "2"]
    assert await _ids(index, "water", "prices", max_results=3) in (
        ["1", "2", "3"],
        ["1", "2", "prices-only"],
    )


async def test_exact_keywords_are_phrases(index: Path) -> None:
    assert await _ids(index, "prices rose") == ["2"]
    assert await _ids(index, "rose prices") == []
    # As plain words both are required first; the words found alone come after.
    assert await _ids(index, "rose prices", exact=False) == ["2", "1", "prices-only"]


async def test_any_of_requires_one_of_its_terms_in_both_rounds(index: Path) -> None:
    assert await _ids(index, "water", any_of=("tariff", "bread")) == ["1"]
    ids = await _ids(index, "water", "prices", any_of=("lake", "bread"))
    assert sorted(ids) == ["3", "prices-only"]  # only the fill has them
    assert await _ids(index, "water", any_of=("NEAR(",)) == []  # the word "near", no doc
    # Terms with nothing to search for add no condition.
    assert sorted(await _ids(index, "water", any_of=('"', "*"))) == ["1", "2", "3"]


async def test_cutoff_drops_later_documents_and_keeps_undated(index: Path) -> None:
    ids = await _ids(index, "water", "prices", cutoff=dt.date(2023, 3, 31))
    assert "2" not in ids and ids[0] == "1"
    assert "3" in ids  # undated
    assert await _ids(index, "bread", cutoff=dt.date(2021, 12, 31)) == []


async def test_excluded_domains_are_dropped(index: Path) -> None:
    ids = await _ids(index, "water", exclude_domains=("archive.example.org",))
    assert ids == ["3"]


async def test_diacritics_and_case_do_not_matter(index: Path) -> None:
    assert await _ids(index, "ZURICH") == await _ids(index, "Zürich") == ["1", "2"]


async def test_snippet_and_description(index: Path, tmp_path: Path) -> None:
    long_text = "intro " * 100 + "the turbine failed " + "outro " * 100
    database = tmp_path / "long.db"
    index_corpus(_jsonl(tmp_path / "long.jsonl", [{"id": "l", "text": long_text}]), database)
    [result] = await CorpusSearch(database).search(WebQuery(("turbine",)))
    assert "turbine failed" in result.snippet and len(result.snippet.split()) <= 42
    assert result.description.startswith("intro intro") and result.description.endswith("…")
    assert len(result.description) <= 302
    assert result.published is None and result.url == "corpus:l"


@pytest.mark.parametrize(
    "keyword",
    [
        '"',
        '""',
        "*",
        "water*",
        "NEAR(",
        "NEAR(water lake)",
        "water OR lake",
        "water AND NOT lake",
        "-water",
        "^water",
        "title:water",
        "{title text}: water",
        "water\x00lake",
        "💧 ẅäter ﬁ",
        "",
        "   ",
        "x" * 10_000,
        "water " * 2_000,
    ],
)
async def test_hostile_keywords_neither_raise_nor_inject(index: Path, keyword: str) -> None:
    ids = await _ids(index, keyword)
    # Read as FTS5 syntax, these would match "water" documents (or "waterfall" for
    # the prefix). As one quoted phrase each, they can only match that phrase.
    assert "fall" not in ids
    if keyword.strip() not in ("water*", "-water", "^water"):
        assert ids == []
    ids = await _ids(index, keyword, "lake", exact=False)
    assert "fall" not in ids


def test_every_term_is_one_fts5_string() -> None:
    terms = match_terms(['a"b', 'NEAR(x y) "', "*", "\x00", "ok ok", "ok ok"])
    assert terms == ['"a""b"', '"NEAR(x y) """', '"ok ok"']
    for term in terms:
        assert term.startswith('"') and term.endswith('"')
        assert '"' not in term[1:-1].replace('""', "")
    assert match_terms(["a b", "b"], exact=False) == ['"a"', '"b"']


async def test_no_keywords_or_no_budget_gives_nothing(index: Path) -> None:
    backend = CorpusSearch(index)
    assert await backend.search(WebQuery(())) == []
    assert await backend.search(WebQuery(("water",), max_results=0)) == []


# -------------------------------------------------------------------- settings


def _settings_error(tmp_path: Path, text: str) -> str:
    config = tmp_path / "zofia.toml"
    config.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(config, environ={})
    return str(info.value)


def test_settings_need_a_path_that_exists(tmp_path: Path, index: Path) -> None:
    empty = _settings_error(tmp_path, '[web]\nbackends = ["corpus"]\n')
    assert "web.corpus.path" in empty and "empty" in empty
    missing = _settings_error(
        tmp_path, f'[web]\nbackends = ["corpus"]\n[web.corpus]\npath = "{tmp_path / "no.db"}"\n'
    )
    assert "not found" in missing and "zofia corpus index" in missing
    config = tmp_path / "zofia.toml"
    config.write_text(f'[web]\nbackends = ["corpus"]\n[web.corpus]\npath = "{index}"\n', "utf-8")
    settings: EngineSettings = load_config(config, environ={})
    [backend] = build_search_backends(settings.web)
    assert isinstance(backend, CorpusSearch) and backend.name == "web:corpus"


def test_a_path_alone_turns_nothing_on(tmp_path: Path) -> None:
    settings: EngineSettings = load_config(
        None, environ={"ZOFIA__WEB__CORPUS__PATH": str(tmp_path / "x.db")}
    )
    assert settings.web.backends == [] and build_search_backends(settings.web) == []


# ------------------------------------------------------------------------- CLI


def test_cli_indexes_and_refuses_to_overwrite(tmp_path: Path) -> None:
    source = _jsonl(tmp_path / "docs.jsonl", DOCS)
    output = tmp_path / "out" / "archive.db"
    output.parent.mkdir()
    runner = CliRunner()
    result = runner.invoke(main, ["corpus", "index", str(source), "--output", str(output)])
    assert result.exit_code == 0, result.output
    assert f"indexed {len(DOCS)} documents into {output}" in result.output
    assert 'backends = ["corpus"]' in result.output
    assert f'path = "{output.resolve()}"' in result.output
    again = runner.invoke(main, ["corpus", "index", str(source), "--output", str(output)])
    assert again.exit_code == 1 and "--replace" in again.output
    assert "Traceback" not in again.output
    _jsonl(source, DOCS[:2])
    replaced = runner.invoke(
        main, ["corpus", "index", str(source), "--output", str(output), "--replace"]
    )
    assert replaced.exit_code == 0 and "indexed 2 documents" in replaced.output


def test_cli_default_output_and_bad_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.jsonl").write_text('{"id": "a", "text": "ok"}\n{oops\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["corpus", "index", "bad.jsonl"])
    assert result.exit_code == 1 and "bad.jsonl:2: not a JSON line" in result.output
    _jsonl(tmp_path / "good.jsonl", DOCS)
    assert CliRunner().invoke(main, ["corpus", "index", "good.jsonl"]).exit_code == 0
    assert (tmp_path / "corpus.db").is_file()


@pytest.mark.parametrize("args", [["corpus"], ["corpus", "index"]])
def test_cli_help_exists(args: list[str]) -> None:
    result = CliRunner().invoke(main, [*args, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output


# ------------------------------------------------------- the LIAR evaluation corpus


@pytest.fixture(scope="module")
def liar() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "liar_corpus", REPO_ROOT / "bench" / "liar_corpus.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "sentence",
    [
        "We rate the claim Mostly False.",
        "That earns a Pants on Fire rating.",
        "We rate it Half True.",
        "So the claim is false.",
        "True.",
        "He slid down the Truth-O-Meter.",
        "Our ruling Smith said taxes rose.",
        "The statement is accurate but needs clarification or additional information.",
        "PolitiFact rates this claim barely true.",
    ],
)
def test_rating_sentences_are_dropped(liar: ModuleType, sentence: str) -> None:
    assert liar.is_rating_sentence(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The claim that taxes rose is not supported by the data.",
        "He repeated a false claim about the budget in 2019.",
        "True, the budget grew by 3 percent.",
        "The unemployment rate that year was 8 percent.",
        "Rates that are used to tax carried interest have been at historic lows.",
    ],
)
def test_other_sentences_are_kept(liar: ModuleType, sentence: str) -> None:
    assert not liar.is_rating_sentence(sentence)


def test_liar_corpus_writes_documents_without_ratings(
    liar: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = tmp_path / "liar.jsonl"
    rows: list[dict[str, Any]] = [
        {"id": 5, "label": "false", "claim": "c", "speaker": "jane-doe",
         "justification": "The budget grew 3 percent. We rate the claim Mostly False."},
        {"id": "6.json", "label": "true", "claim": "c", "speaker": "",
         "justification": "That earns a Pants on Fire rating."},
    ]  # fmt: skip
    _jsonl(data, rows)
    output = tmp_path / "corpus.jsonl"
    monkeypatch.setattr(sys, "argv", ["liar_corpus.py", str(output), "--data", str(data)])
    liar.main()
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["documents"] == 1
    assert summary["sentences_kept"] == 1 and summary["sentences_dropped"] == 2
    assert "We rate the claim Mostly False." in summary["dropped_examples"]
    [document] = [json.loads(line) for line in output.read_text("utf-8").splitlines()]
    assert document == {"id": "5", "title": "jane doe", "text": "The budget grew 3 percent."}
    assert index_corpus(output, tmp_path / "liar.db") == 1
