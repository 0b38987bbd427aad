"""Stage 1 finds the article a post names by title (the title gazetteer).

The fast tests run the gazetteer pass, the offline backend on a small summaries file,
the MediaWiki fallback against ``tests/peers/servers/mediawiki_peer.py`` and the ranking with a
bag-of-words encoder. The slow ones run real spaCy, the real MiniLM encoder and the
real packaged summaries on the posts where the entity keywords alone missed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytest_asyncio

from tests.peers.servers.mediawiki_peer import CORPUS, Fault, MediaWikiPeer, refused_port_url

from zofia_engine.config import EngineSettings, WikipediaSettings
from zofia_engine.encoder import SentenceTransformerEncoder
from zofia_engine.errors import SourceError
from zofia_engine.records.stage1 import WikiCandidate
from zofia_engine.retrieval.ner import NERBackend
from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval
from zofia_engine.retrieval.salience import PostView, SalienceResult
from zofia_engine.retrieval.wikipedia.gazetteer import (
    MAX_PHRASE_WORDS,
    MAX_TOKENS,
    SHORT_POST_WORDS,
    TitleMatch,
    capitalised_spans,
    find_titles,
)
from zofia_engine.retrieval.wikipedia.lookup import search_wikipedia
from zofia_engine.retrieval.wikipedia.mediawiki import TITLE_SEARCHES, MediaWikiBackend
from zofia_engine.retrieval.wikipedia.offline import OfflineWikipedia
from zofia_engine.retrieval.wikipedia.ranking import MIN_CLOSENESS, gist, pick_articles
from zofia_engine.retrieval.wikipedia.titles import normalize_title, without_disambiguator

pytest_plugins = ["tests.peers.fixtures.model_fixtures"]

TITLES = [
    "Mona Lisa",
    "Rembrandt",
    "Artist",
    "Liberty",
    "Statue of Liberty",
    "Island",
    "New York (state)",
    "Mercury (planet)",
    "Mercury (element)",
    "Newton's laws of motion",
    "Isaac Newton",
    "Black hole",
    "Leonardo da Vinci",
    "The Who",
    "It (novel)",
    "Berlin",
    "Germany",
    "Berlin Germany",
    "Bathroom",
    "Country",
]


def _index(titles: Sequence[str]) -> dict[str, list[str]]:
    index: dict[str, list[str]] = {}
    for title in titles:
        index.setdefault(normalize_title(without_disambiguator(title)), []).append(title)
    return index


class _CountingLookup:
    """The in-test title index, with a count of look-ups and of the characters looked up."""

    def __init__(self, titles: Sequence[str] = TITLES) -> None:
        self.index = _index(titles)
        self.calls = 0
        self.characters = 0

    def __call__(self, key: str) -> list[str]:
        self.calls += 1
        self.characters += len(key)
        return self.index.get(key, [])


def _found(text: str, limit: int = 10, **kwargs: Any) -> list[tuple[str, list[str]]]:
    return [
        (phrase.text, list(titles))
        for phrase, titles in find_titles(text, _CountingLookup(), limit=limit, **kwargs)
    ]


# ------------------------------------------------------------------ the gazetteer pass


def test_a_work_named_mid_sentence_is_found_with_the_people() -> None:
    found = _found("The Mona Lisa was painted by the Dutch artist Rembrandt.")
    assert found == [
        ("Mona Lisa", ["Mona Lisa"]),
        ("Rembrandt", ["Rembrandt"]),
        ("artist", ["Artist"]),
    ]


def test_a_name_inside_a_longer_title_is_not_found_on_its_own() -> None:
    found = dict(_found("The Statue of Liberty stands on Liberty Island in New York Harbor."))
    assert found["Statue of Liberty"] == ["Statue of Liberty"]
    assert found["New York"] == ["New York (state)"]
    assert "Island" in found
    # "Liberty" inside "Statue of Liberty" is dropped; its second use stands alone.
    assert found["Liberty"] == ["Liberty"]
    phrases = find_titles(
        "The Statue of Liberty stands on Liberty Island.", _CountingLookup(), limit=10
    )
    liberty = [p for p, _ in phrases if p.key == "liberty"]
    assert [p.start for p in liberty] == [32]


def test_senses_that_share_a_name_come_together() -> None:
    assert _found("mercury rises") == [("mercury", ["Mercury (planet)", "Mercury (element)"])]


def test_phrases_never_cross_punctuation() -> None:
    found = dict(_found("It stands in Berlin, Germany."))
    assert set(found) == {"Berlin", "Germany"}  # not "Berlin Germany"
    assert "Berlin Germany" in dict(_found("It stands in Berlin Germany."))


def test_possessives_plurals_and_case_do_not_matter() -> None:
    found = dict(_found("Leonardo da Vinci's Mona Lisa and two BLACK HOLES."))
    assert found["Leonardo da Vinci's"] == ["Leonardo da Vinci"]
    assert found["BLACK HOLES"] == ["Black hole"]
    found = dict(_found("Isaac Newton's laws of motion were published in 1687."))
    assert found["Isaac Newton's"] == ["Isaac Newton"]
    assert found["Newton's laws of motion"] == ["Newton's laws of motion"]


def test_function_words_name_nothing() -> None:
    assert _found("It is who we are, and it was the who of it.") == []


def test_names_come_before_common_nouns_and_the_limit_holds() -> None:
    text = "An artist in Berlin painted the Mona Lisa on an island."
    assert [p for p, _ in _found(text)] == ["Mona Lisa", "Berlin", "artist", "island"]
    assert [p for p, _ in _found(text, limit=2)] == ["Mona Lisa", "Berlin"]
    assert _found(text, limit=0) == []


def test_skipped_keys_are_not_returned() -> None:
    found = _found("Rembrandt painted the Mona Lisa.", skip=frozenset({"rembrandt"}))
    assert found == [("Mona Lisa", ["Mona Lisa"])]


def test_in_a_long_post_a_common_noun_said_once_is_not_a_topic() -> None:
    filler = " ".join(["word"] * SHORT_POST_WORDS)
    once = f"The bathroom was small. Rembrandt lived in a country house. {filler}"
    assert [p for p, _ in _found(once)] == ["Rembrandt"]
    twice = f"The bathroom was small. The bathroom was cold. {filler}"
    assert [p for p, _ in _found(twice)] == ["bathroom"]
    assert [p for p, _ in _found("The bathroom was small.")] == ["bathroom"]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(" ".join(f"Word{i % 97} Statue" for i in range(6000)), id="one-long-run"),
        pytest.param("Statue of Liberty " * 3000, id="repeated-name"),
        pytest.param("a" * 50_000, id="one-word"),
        pytest.param("Mona Lisa, " * 5000, id="many-runs"),
        pytest.param("é" * 25_000 + " Mona Lisa", id="accents"),
    ],
)
def test_a_50_kb_post_stays_bounded(text: str) -> None:
    """The pass's work is bounded on any post, counted, not timed (its time on these
    posts is ``bench/retrieval_passes.py``'s): look-ups, and the characters looked up."""
    assert len(text.encode()) >= 50_000
    lookup = _CountingLookup()
    found = find_titles(text, lookup, limit=10)
    # At most MAX_TOKENS words, each opening at most MAX_PHRASE_WORDS n-grams with at
    # most four spellings each (as written, possessive or three plural endings).
    assert lookup.calls <= MAX_TOKENS * MAX_PHRASE_WORDS * 4
    # Each word is in at most 21 n-grams (6 + 5 + ... + 1 of up to six words), each
    # looked up in at most four spellings: the characters looked up grow with the post,
    # never with its square.
    per_word = sum(range(MAX_PHRASE_WORDS + 1)) * 4
    assert lookup.characters <= per_word * 2 * len(text)
    assert len(found) <= 10
    assert len({p.key for p, _ in found}) == len(found)


def test_capitalised_spans_are_the_names_a_post_writes() -> None:
    spans = capitalised_spans("The Statue of Liberty stands on Liberty Island in New York Harbor.")
    assert [s.text for s in spans] == ["Statue of Liberty", "Liberty Island", "New York Harbor"]
    spans = capitalised_spans("Analysts said Tesla beat Tesla. Shares rose in Europe.")
    assert [s.text for s in spans] == ["Tesla", "Europe"]  # not the sentence openers


# -------------------------------------------------------------- the offline backend


def _write_summaries(path: Path, titles: Sequence[str]) -> Path:
    data = {
        t: {"title": t, "extract": f"{t} is a test. It has two sentences.", "description": ""}
        for t in titles
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


async def test_offline_title_matches_return_full_candidates(tmp_path: Path) -> None:
    backend = OfflineWikipedia(_write_summaries(tmp_path / "tiny.json", TITLES))
    matches = await backend.title_matches("Did mercury poison the Mona Lisa?", 5)
    assert [(m.phrase, m.start) for m in matches] == [("Mona Lisa", 23), ("mercury", 4)]
    assert [c.title for c in matches[1].candidates] == ["Mercury (planet)", "Mercury (element)"]
    lisa = matches[0].candidates[0]
    assert lisa.url == "https://en.wikipedia.org/wiki/Mona_Lisa"
    assert lisa.extract.startswith("Mona Lisa is a test.")
    assert await backend.title_matches("Mona Lisa", 0) == []
    assert await backend.title_matches("   ", 5) == []


# ---------------------------------------------------------- the MediaWiki fallback

AGENT = "zofia-tests/1.0 (https://example.org/zofia; tests@example.org)"


def _mediawiki(url: str) -> MediaWikiBackend:
    return MediaWikiBackend(
        url, user_agent=AGENT, timeout_s=2.0, retries=0, requests_per_second=1000.0
    )


@pytest_asyncio.fixture
async def mediawiki_peer() -> AsyncIterator[MediaWikiPeer]:
    async with MediaWikiPeer(CORPUS) as peer:
        yield peer


POST = "Yesterday Freddie Mercury sang in Zürich about Apple Records and Mercury Rising."


async def test_mediawiki_searches_a_few_names_and_keeps_exact_titles(
    mediawiki_peer: MediaWikiPeer,
) -> None:
    backend = _mediawiki(mediawiki_peer.url)
    try:
        matches = await backend.title_matches(POST, 10)
    finally:
        await backend.aclose()
    searched = [r.params["gsrsearch"] for r in mediawiki_peer.requests]
    # Names of several words first; "Yesterday" opens the sentence and is no name.
    assert searched == ["Freddie Mercury", "Apple Records", "Mercury Rising"]
    assert len(searched) == TITLE_SEARCHES
    assert [(m.phrase, [c.title for c in m.candidates]) for m in matches] == [
        ("Freddie Mercury", ["Freddie Mercury"]),
        ("Apple Records", ["Apple Records"]),
    ]


async def test_mediawiki_skips_keywords_and_survives_one_failure(
    mediawiki_peer: MediaWikiPeer,
) -> None:
    mediawiki_peer.script(Fault.server_error(503))
    backend = _mediawiki(mediawiki_peer.url)
    try:
        matches = await backend.title_matches(POST, 10, frozenset({"freddie mercury"}))
    finally:
        await backend.aclose()
    searched = {r.params["gsrsearch"] for r in mediawiki_peer.requests}
    assert "Freddie Mercury" not in searched
    assert len(matches) <= 1  # one search got the 503; the others still count


async def test_mediawiki_fails_only_when_every_search_fails() -> None:
    backend = _mediawiki(refused_port_url())
    try:
        with pytest.raises(SourceError):
            await backend.title_matches(POST, 10)
        assert await backend.title_matches("no names here at all", 10) == []
    finally:
        await backend.aclose()


# ----------------------------------------------------------------------- ranking


class _BagOfWords:
    """A deterministic encoder for ranking tests: hashed word counts, L2-normalised."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    @property
    def dimension(self) -> int:
        return 256

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = np.zeros((len(texts), 256), np.float32)
        for row, text in zip(rows, texts, strict=True):
            for word in re.findall(r"\w+", text.casefold()):
                row[int(hashlib.md5(word.encode()).hexdigest(), 16) % 256] += 1
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        unit: np.ndarray = rows / np.where(norms == 0, 1, norms)
        return unit


def _candidate(title: str, description: str = "") -> WikiCandidate:
    return WikiCandidate(
        title=title, url=f"u/{title}", description=description, extract=f"{title} is a thing."
    )


def test_title_picks_follow_the_keywords_closest_first_and_far_ones_go() -> None:
    encoder = _BagOfWords()
    post = "painting portrait painted by leonardo museum louvre"
    [v_post] = encoder.encode([post])
    near = TitleMatch("Mona Lisa", 0, [_candidate("Mona Lisa", "portrait painting by Leonardo")])
    middle = TitleMatch("Louvre", 9, [_candidate("Louvre", "art museum in Paris")])
    far = TitleMatch("Autumn", 20, [_candidate("Autumn", "season of the year")])
    context = "Rembrandt painted it"
    [v_context] = encoder.encode([context])
    keyword = (context, ["Rembrandt"], v_context, [_candidate("Rembrandt", "Dutch painter")])

    picks = pick_articles([keyword], ["Rembrandt"], [far, middle, near], v_post, encoder)

    assert [(p.keyword, p.by_title) for p in picks] == [
        ("Rembrandt", False),
        ("Mona Lisa", True),
        ("Louvre", True),
    ]
    assert picks[1].score > picks[2].score >= MIN_CLOSENESS
    assert len(encoder.calls) == 3  # the test's own two, then one batch
    assert gist(far.candidates[0]) in encoder.calls[-1]


def test_without_a_post_vector_only_eq7_runs() -> None:
    encoder = _BagOfWords()
    context = "Rembrandt painted it"
    [v_context] = encoder.encode([context])
    keyword = (context, ["Rembrandt"], v_context, [_candidate("Rembrandt", "Dutch painter")])
    match = TitleMatch("Mona Lisa", 0, [_candidate("Mona Lisa")])
    picks = pick_articles([keyword], ["Rembrandt"], [match], None, encoder)
    assert [p.candidate.title for p in picks] == ["Rembrandt"]
    assert encoder.calls[-1] == ["Dutch painter painted it"]


def test_a_keywords_exact_title_is_a_second_opinion_when_closer_to_the_post() -> None:
    encoder = _BagOfWords()
    post = "the moon orbits the earth natural satellite"
    [v_post] = encoder.encode([post])
    moon = _candidate("Moon", "natural satellite of the earth")
    landing = _candidate("Moon landing", "moon moon moon moon orbits")  # eq. 7's pick here
    context = "The Moon orbits the Earth"
    [v_context] = encoder.encode(["moon moon moon moon orbits orbits orbits"])
    keyword = (context, ["Moon"], v_context, [moon, landing])

    picks = pick_articles([keyword], ["Moon"], [], v_post, encoder)

    assert [(p.candidate.title, p.by_title) for p in picks] == [
        ("Moon landing", False),
        ("Moon", True),
    ]
    assert picks[1].candidates == ["Moon"]


def _no_entities() -> SalienceResult:
    empty = np.zeros((0, 0), np.float32)
    return SalienceResult([], empty, [], empty)


async def test_search_wikipedia_adds_at_most_max_candidates_titles(tmp_path: Path) -> None:
    titles = ["Mona Lisa", "Louvre", "Paris", "Leonardo da Vinci", "Painting", "Museum", "France"]
    backend = OfflineWikipedia(_write_summaries(tmp_path / "tiny.json", titles))
    encoder = _BagOfWords()
    text = "Leonardo da Vinci's Mona Lisa hangs in the Louvre museum in Paris, France."
    [vector] = encoder.encode([text])
    wiki = WikipediaSettings(max_candidates=3)
    timings: dict[str, float] = {}

    entries, status = await search_wikipedia(
        backend, wiki, encoder, [], _no_entities(), timings, PostView(text, vector)
    )

    assert len(entries) == 3
    assert len({e.title for e in entries}) == 3
    assert [e.score for e in entries] == sorted((e.score for e in entries), reverse=True)
    assert status.status == "ok" and status.results == 3
    assert entries[0].text == entries[0].title + " is a test. It has two sentences."
    assert "wikipedia_ms" in timings

    off = WikipediaSettings(max_candidates=3, title_matches=False)
    entries, status = await search_wikipedia(
        backend, off, encoder, [], _no_entities(), timings, PostView(text, vector)
    )
    assert entries == [] and status.status == "skipped"
    entries, status = await search_wikipedia(
        backend, wiki, encoder, [], _no_entities(), timings, PostView("it is raining", vector)
    )
    assert entries == [] and status.status == "skipped"


async def test_search_wikipedia_reports_a_failed_title_pass() -> None:
    backend = _mediawiki(refused_port_url())
    encoder = _BagOfWords()
    text = "The Statue of Liberty stands in New York Harbor."
    [vector] = encoder.encode([text])
    try:
        entries, status = await search_wikipedia(
            backend, WikipediaSettings(), encoder, [], _no_entities(), {}, PostView(text, vector)
        )
    finally:
        await backend.aclose()
    assert entries == []
    assert status.status == "failed" and status.detail


# ------------------------------------------------ real models, real summaries (slow)

NAMED_POSTS = [
    ("The Mona Lisa was painted by the Dutch artist Rembrandt.", "Mona Lisa"),
    (
        "The Eiffel Tower, the wrought-iron lattice tower completed in 1889, stands in the "
        "centre of Berlin, Germany.",
        "Eiffel Tower",
    ),
    ("The Statue of Liberty stands on Liberty Island in New York Harbor.", "Statue of Liberty"),
]


@pytest_asyncio.fixture
async def make_stage1(
    ner: NERBackend, encoder: SentenceTransformerEncoder, offline_wiki: OfflineWikipedia
) -> AsyncIterator[Callable[[bool], EntityGuidedRetrieval]]:
    made: list[EntityGuidedRetrieval] = []

    def make(title_matches: bool) -> EntityGuidedRetrieval:
        settings = EngineSettings.model_validate({"wikipedia": {"title_matches": title_matches}})
        stage1 = EntityGuidedRetrieval(
            settings, ner=ner, encoder=encoder, search_backends=[], wikipedia=offline_wiki
        )
        made.append(stage1)
        return stage1

    yield make
    for stage1 in made:
        await stage1.aclose()


@pytest.mark.slow
@pytest.mark.parametrize(("post", "article"), NAMED_POSTS, ids=["mona-lisa", "eiffel", "liberty"])
async def test_the_article_a_post_names_is_found(
    post: str, article: str, make_stage1: Callable[[bool], EntityGuidedRetrieval]
) -> None:
    with_titles = await make_stage1(True).run(post)
    paper = await make_stage1(False).run(post)

    titles = [e.title for e in with_titles.wikipedia]
    assert article in titles
    assert len(titles) == len(set(titles))
    # The keywords' own articles stay, first and unchanged; the title matches follow.
    assert with_titles.keywords == paper.keywords
    assert with_titles.wikipedia[: len(paper.wikipedia)] == paper.wikipedia
    added = with_titles.wikipedia[len(paper.wikipedia) :]
    assert len(added) <= EngineSettings().wikipedia.max_candidates
    for entry in added:
        assert entry.source == "wikipedia:offline"
        assert entry.keyword in post
        assert entry.text and entry.url.startswith("https://en.wikipedia.org/wiki/")
