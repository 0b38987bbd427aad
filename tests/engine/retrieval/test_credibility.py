"""Source credibility from the packaged news-domain quality ratings (Lin et al. 2023)."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from importlib import resources

import pytest
from pydantic import ValidationError

from zofia_engine.retrieval.credibility import (
    Credibility,
    SourceQuality,
    counts_against,
    domain_candidates,
)


def _ratings() -> dict[str, float]:
    """The packaged CSV's rating of each domain, read here as the file says."""
    return {r["domain"]: float(r["pc1"]) for r in _packaged("domain_quality_pc1.csv")}


def _packaged(name: str) -> list[dict[str, str]]:
    text = (resources.files("zofia_engine") / "data" / name).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture(scope="module")
def sq() -> SourceQuality:
    return SourceQuality()


def test_the_packaged_ratings_load_through_importlib_resources() -> None:
    rows = _packaged("domain_quality_pc1.csv")
    assert len(rows) == 11_520
    assert list(rows[0]) == ["domain", "pc1"]
    assert all(0.0 <= float(r["pc1"]) <= 1.0 for r in rows)
    # No row lost or merged: each is found by its own domain, with its own rating (but a
    # "www." row: a lookup drops the "www.", so its bare domain's row answers).
    sq = SourceQuality()
    found = [(r["domain"], sq.classify(r["domain"]).quality) for r in rows]
    expected = [(r["domain"], float(r["pc1"])) for r in rows]
    assert [f for f in found if not f[0].startswith("www.")] == [
        e for e in expected if not e[0].startswith("www.")
    ]


def test_the_label_list_is_short_and_sourced() -> None:
    rows = _packaged("source_labels.csv")
    assert 15 <= len(rows) <= 30
    assert {r["label"] for r in rows} == {"fact-checker", "satire"}
    assert all(r["source"].strip() and r["domain"] == r["domain"].lower() for r in rows)
    assert len({r["domain"] for r in rows}) == len(rows)


@pytest.mark.parametrize(
    ("url", "domain", "quality", "label"),
    [
        ("reuters.com", "reuters.com", 1.0, "high"),
        ("apnews.com", "apnews.com", 0.998, "high"),
        ("infowars.com", "infowars.com", 0.046, "low"),
        ("breitbart.com", "breitbart.com", 0.297, "low"),
        ("cnn.com", "cnn.com", 0.658, "medium"),
        ("snopes.com", "snopes.com", 0.904, "fact-checker"),
        ("theonion.com", "theonion.com", 0.446, "satire"),
        # The fact-checking arm is labelled, the agency itself only rated.
        ("https://factcheck.afp.com/doc.afp.com.1", "factcheck.afp.com", 0.955, "fact-checker"),
        ("https://www.afp.com/en/news", "afp.com", 0.955, "high"),
    ],
)
def test_known_sources(
    sq: SourceQuality, url: str, domain: str, quality: float, label: str
) -> None:
    got = sq.classify(url)
    assert (got.domain, got.label) == (domain, label)
    assert got.quality == pytest.approx(quality, abs=5e-4)


@pytest.mark.parametrize(
    ("url", "domain"),
    [
        ("www.reuters.com", "reuters.com"),
        ("live.reuters.com", "reuters.com"),  # not in the CSV: falls back to the parent
        ("uk.reuters.com", "uk.reuters.com"),  # the CSV rates this subdomain itself
        ("edition.cnn.com", "edition.cnn.com"),
        ("money.cnn.com", "cnn.com"),
        ("news.bbc.co.uk", "bbc.co.uk"),
        ("https://sport.bbc.co.uk/football", "bbc.co.uk"),
    ],
)
def test_subdomains_take_the_most_specific_entry(sq: SourceQuality, url: str, domain: str) -> None:
    assert sq.classify(url).domain == domain
    assert sq.classify(url).quality == _ratings()[domain]


def test_the_walk_stops_at_the_registrable_domain(sq: SourceQuality) -> None:
    assert domain_candidates("news.bbc.co.uk") == ["news.bbc.co.uk", "bbc.co.uk"]
    assert domain_candidates("a.b.example.com") == [
        "a.b.example.com",
        "b.example.com",
        "example.com",
    ]
    assert domain_candidates("82.221.129.208") == ["82.221.129.208"]
    assert sq.classify("no-such-paper.co.uk") == Credibility(
        domain="no-such-paper.co.uk", quality=None, label="unknown"
    )


@pytest.mark.parametrize(
    "url",
    [
        "https://www.reuters.com:443/world/article?id=1#top",
        "reuters.com:8080",
        "http://user:secret@reuters.com/x",
        "HTTPS://WWW.REUTERS.COM/World",
        "reuters.com.",
        "https://www.reuters.com./x",
        "  //reuters.com/path  ",
    ],
)
def test_host_forms_normalise(sq: SourceQuality, url: str) -> None:
    assert sq.classify(url) == Credibility(domain="reuters.com", quality=1.0, label="high")


def test_idna_forms_meet() -> None:
    unicode_host = SourceQuality().classify("https://Bücher.example")
    punycode = SourceQuality().classify("xn--bcher-kva.example")
    assert unicode_host.domain == punycode.domain == "xn--bcher-kva.example"
    # A homograph (Cyrillic "о") is a different name, not reuters.com.
    assert SourceQuality().classify("reuters.c\u043em").label == "unknown"


@pytest.mark.parametrize(
    "url", ["", "   ", "file:///etc/passwd", "https:///only/a/path", "/relative", "http://[bad"]
)
def test_no_host_is_unknown(sq: SourceQuality, url: str) -> None:
    assert sq.classify(url) == Credibility(domain="", quality=None, label="unknown")


@pytest.mark.parametrize(
    "url",
    [
        "reuters.com.evil.example",
        "https://reuters.com.evil.example/world",
        "https://reuters.com@evil.example/",
        "evilreuters.com",
        "reuters.co",
    ],
)
def test_lookalikes_are_not_reuters(sq: SourceQuality, url: str) -> None:
    got = sq.classify(url)
    assert got.label == "unknown" and got.quality is None
    assert got.domain != "reuters.com"


def test_unknown_domain(sq: SourceQuality) -> None:
    assert sq.classify("https://www.no-such-news-site.example/a") == Credibility(
        domain="no-such-news-site.example", quality=None, label="unknown"
    )


def test_path_entries_and_platforms(sq: SourceQuality) -> None:
    assert sq.classify("https://www.newyorker.com/humor/borowitz-report/x").label == "low"
    assert sq.classify("https://www.newyorker.com/news/x").domain == "newyorker.com"
    channel = sq.classify("https://www.youtube.com/nextnewsnetwork/videos")
    assert channel.domain == "youtube.com/nextnewsnetwork"
    # The platform's own rating does not judge someone else's video or blog.
    assert sq.classify("https://www.youtube.com/watch?v=abc").label == "unknown"
    assert sq.classify("https://someone.blogspot.com/2024/post.html").label == "unknown"
    assert sq.classify("youtube.com").quality == _ratings()["youtube.com"]


def test_thresholds_are_arguments() -> None:
    assert SourceQuality(low_below=0.25).classify("breitbart.com").label == "medium"
    assert SourceQuality(high_from=0.95).classify("nytimes.com").label == "medium"
    assert SourceQuality(low_below=0.5, high_from=0.5).classify("foxnews.com").label == "high"
    with pytest.raises(ValueError):
        SourceQuality(low_below=0.8, high_from=0.7)
    with pytest.raises(ValueError):
        SourceQuality(high_from=1.5)


def test_credibility_model_is_strict() -> None:
    with pytest.raises(ValidationError):
        Credibility(domain="a.com", quality=0.5, label="medium", extra=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Credibility(domain="a.com", quality=0.5, label="reliable")


_AGAINST = {
    # label: (supports, refutes, neutral, not enough information)
    "high": (False, True, False, False),
    "medium": (False, True, False, False),
    "fact-checker": (False, True, False, False),
    "unknown": (False, True, False, False),
    "low": (True, False, False, False),
    "satire": (True, False, False, False),
}


@pytest.mark.parametrize("label", sorted(_AGAINST))
@pytest.mark.parametrize(
    ("index", "stance"),
    [(0, "supports"), (1, "refutes"), (2, "neutral"), (3, "not enough information")],
)
def test_counts_against(label: str, index: int, stance: str) -> None:
    cred = Credibility(domain="x.example", quality=None, label=label)
    assert counts_against(stance, cred) is _AGAINST[label][index]  # type: ignore[arg-type]


def test_reverse_rule_on_real_sources(sq: SourceQuality) -> None:
    assert counts_against("supports", sq.classify("https://www.infowars.com/a")) is True
    assert counts_against("supports", sq.classify("https://theonion.com/a")) is True
    assert counts_against("supports", sq.classify("https://www.reuters.com/a")) is False
    assert counts_against("refutes", sq.classify("https://www.snopes.com/fact-check/a")) is True


def test_loads_once_across_threads() -> None:
    """In a fresh interpreter (nothing read yet), eight threads classify at once; the
    packaged files (the ratings, the labels) are read once each."""
    code = """
import importlib.resources, threading
reads = []
real = importlib.resources.files
def counted(package):
    reads.append(package)
    return real(package)
importlib.resources.files = counted
from zofia_engine.retrieval.credibility import SourceQuality
labels = []
threads = [
    threading.Thread(target=lambda: labels.append(SourceQuality().classify("apnews.com").label))
    for _ in range(8)
]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(reads), sorted(set(labels)), len(labels))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2", "['high']", "8"]


def test_a_light_import() -> None:
    """Classifying a domain imports no model library (its load's time is
    ``bench/retrieval_passes.py``'s ``quality_load_ms``)."""
    code = (
        "import sys\n"
        "from zofia_engine.retrieval.credibility import SourceQuality\n"
        "print(SourceQuality().classify('reuters.com').label, 'torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["high", "False"]
