"""Stage 1 end to end: post text in, keywords and an evidence pool out.

NER → dynamic threshold → variant merging → hierarchical salience → SC-MMR,
then open-web search and Wikipedia lookup run concurrently. Model work runs in
a worker thread; a failing source is recorded and the others carry on.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import EngineSettings
from ..encoder import SentenceTransformerEncoder
from ..language import detect_language
from ..ports import TextEncoder
from ..records.notes import Note, note, search_cut, source_failed, web_off
from ..records.stage1 import (
    Keyword,
    SourceStatus,
    Stage1Result,
    WebResult,
    WikipediaEntry,
)
from ..text import clean_post
from .entities import (
    aggregate_units,
    clean_units,
    merge_variants,
    select_by_dynamic_threshold,
)
from .factcheck.base import FactCheckBackend
from .factcheck.lookup import FactCheckLookup
from .keywords import select_keywords, similarity_matrix
from .ner import NERBackend, NEROutput, build_ner_backend
from .ner.parser import SpacyParser, TextParser
from .queries import counter_query, web_query
from .salience import PostView, SalienceResult, score_salience
from .web.base import SearchBackend, WebQuery, compose_query
from .web.search import search_all
from .wikipedia.lookup import search_wikipedia

if TYPE_CHECKING:
    from .wikipedia.base import WikipediaBackend

__all__ = ["EntityGuidedRetrieval"]


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


@dataclass(frozen=True)
class _Keyphrases:
    """What the post's entities give Stage 1: the NER threshold used, the sentences,
    the salience of every entity, and the keywords SC-MMR chose (with their entities)."""

    threshold: float | None
    sentences: list[str]
    salience: SalienceResult
    keywords: list[Keyword]
    chosen: list[int]
    text_vector: np.ndarray


class EntityGuidedRetrieval:
    """ZoFia's Stage 1 (paper §3).

    Args:
        settings: the checked settings.
        ner, encoder, search_backends, wikipedia, factcheck_backends, parser: override
            the backends the settings would build (tests and benchmarks pass their own).

    ``factchecks`` looks posts up among published fact-checks; Stage 2 asks it with
    the post's first sentence and with the core claim. The post's language is a hint to
    the web search (:class:`~.web.base.WebQuery`); Wikipedia is asked in the one edition
    its backend is set to, whatever the post's language (English by default: the
    offline summaries are English, and ``[wikipedia.mediawiki] api_url`` names one wiki).
    """

    def __init__(
        self,
        settings: EngineSettings | None = None,
        *,
        ner: NERBackend | None = None,
        encoder: TextEncoder | None = None,
        search_backends: Sequence[SearchBackend] | None = None,
        wikipedia: WikipediaBackend | bool | None = True,
        factcheck_backends: Sequence[FactCheckBackend] | None = None,
        parser: TextParser | None = None,
    ) -> None:
        self.settings = settings or EngineSettings()
        s = self.settings
        self.ner = ner or build_ner_backend(s.ner)
        # The claim reader's parser: the whole small spaCy pipeline (shared with the NER
        # backend when that is spaCy on the same model).
        self.parser: TextParser = parser or SpacyParser(s.ner.spacy_model)
        self.encoder: TextEncoder = encoder or SentenceTransformerEncoder(
            s.encoder.model, s.encoder.device, s.encoder.batch_size
        )
        if search_backends is None:
            from .web.factory import build_search_backends

            search_backends = build_search_backends(s.web)
        self.search_backends = list(search_backends)
        if wikipedia is True:
            from .wikipedia.factory import build_wikipedia_backend

            wikipedia = build_wikipedia_backend(s.wikipedia)
        self.wikipedia: WikipediaBackend | None = wikipedia or None
        if factcheck_backends is None:
            from .factcheck.factory import build_factcheck_backends

            factcheck_backends = build_factcheck_backends(s.factcheck)
        self.factchecks = FactCheckLookup(
            factcheck_backends,
            self.encoder,
            min_similarity=s.factcheck.min_similarity,
            max_results=s.factcheck.max_results,
        )

    @property
    def local(self) -> bool:
        """Whether every source it may ask answers from this machine: a run costs no
        quota and sends the post nowhere."""
        return (
            all(b.local for b in self.search_backends)
            and (self.wikipedia is None or self.wikipedia.local)
            and not self.factchecks.backends
        )

    async def load(self) -> None:
        """Load the models and offline data now, so the first post is not slow."""
        await asyncio.to_thread(self.ner.load)
        if isinstance(self.parser, SpacyParser):
            await asyncio.to_thread(self.parser.load)
        if isinstance(self.encoder, SentenceTransformerEncoder):
            await asyncio.to_thread(self.encoder.load)
        if self.wikipedia is not None:
            await asyncio.to_thread(self.wikipedia.load)

    async def aclose(self) -> None:
        """Close the backends' connections."""
        for backend in self.search_backends:
            await backend.aclose()
        await self.factchecks.aclose()
        if self.wikipedia is not None:
            await self.wikipedia.aclose()

    async def __aenter__(self) -> EntityGuidedRetrieval:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def run(
        self,
        text: str,
        *,
        published: dt.date | None = None,
        web: bool = True,
        wikipedia: bool = True,
        language: str | None = None,
    ) -> Stage1Result:
        """Run Stage 1 on ``text``.

        Args:
            text: the post.
            published: its publication date; web results are cut off the day before.
            web, wikipedia: turn a source off for this run (the paper's ablations).
            language: the post's language (ISO 639-1), the web search's hint; ``None``:
                detected here (:func:`~zofia_engine.language.detect_language`).
        """
        started = time.perf_counter()
        timings: dict[str, float] = {}
        if isinstance(published, dt.datetime):
            published = published.date()
        text, found_notes = self._cleaned(text)
        if not text.strip():
            return self._empty_result(
                [*found_notes, note("empty post: nothing to retrieve")], started
            )

        if language is None:
            language = detect_language(text)
        found = await self._keyphrases(text, timings)
        lead = found.sentences[0] if found.sentences else text
        query = web_query(self.settings, found.keywords, lead, published, found_notes, language)
        counter = (
            counter_query(self.settings, query, found.keywords)
            if web and self.search_backends
            else None
        )
        web_hits, wiki, sources = await self._search(
            query, counter, found, text, timings, web=web, wikipedia=wikipedia
        )
        found_notes += [source_failed(s.name, s.detail) for s in sources if s.status == "failed"]
        if web and not self.search_backends:
            found_notes.append(web_off())
        timings["total_ms"] = _ms(time.perf_counter() - started)
        return Stage1Result(
            entities=found.salience.entities,
            threshold=found.threshold,
            keywords=found.keywords,
            query=compose_query(query.keywords, query.exact),
            counter_query=compose_query(counter.keywords, True, counter.any_of) if counter else "",
            language=language,
            mode=self.settings.retrieval.mode,
            web=web_hits,
            wikipedia=wiki,
            sources=sources,
            timings_ms=timings,
            notes=found_notes,
        )

    def _cleaned(self, text: str) -> tuple[str, list[Note]]:
        """The post cleaned (:func:`~zofia_engine.text.clean_post`) and cut to ``[ner]
        max_chars``, and what was changed."""
        text, changes = clean_post(text)
        cleaned = [note(change, "cleaned") for change in changes]
        limit = self.settings.ner.max_chars
        if len(text) > limit:
            cleaned.append(search_cut(limit))
            text = text[:limit]
        return text, cleaned

    async def _search(
        self,
        query: WebQuery,
        counter: WebQuery | None,
        found: _Keyphrases,
        text: str,
        timings: dict[str, float],
        *,
        web: bool,
        wikipedia: bool,
    ) -> tuple[list[WebResult], list[WikipediaEntry], list[SourceStatus]]:
        """The open web (the query, then up to ``[retrieval] counter_results`` of the
        counter query's results) and Wikipedia, asked at once: the web results, the
        Wikipedia entries, and every source's status."""
        (
            (web_hits, web_status),
            (counter_hits, counter_status),
            (wiki, wiki_status),
        ) = await asyncio.gather(
            search_all(self.search_backends, query, timings)
            if web
            else _off("web", "turned off for this check"),
            search_all(self.search_backends, counter, timings, label="counter")
            if counter is not None
            else _nothing(),
            search_wikipedia(
                self.wikipedia,
                self.settings.wikipedia,
                self.encoder,
                found.chosen,
                found.salience,
                timings,
                PostView(text, found.text_vector),
            )
            if wikipedia
            else _off("wikipedia", "turned off for this check"),
        )
        web_hits = _with_counter(web_hits, counter_hits, self.settings.retrieval.counter_results)
        return web_hits, wiki, [*web_status, *counter_status, wiki_status]

    async def _keyphrases(self, text: str, timings: dict[str, float]) -> _Keyphrases:
        """Algorithm 2, eq. 3 and SC-MMR: the entities, their salience, the keywords."""
        t = time.perf_counter()
        # The post's own vector needs no entities: encode it while NER runs.
        (v_text,), tagged = await asyncio.gather(
            asyncio.to_thread(self._timed_encode, [text], "text_encode_ms", timings),
            asyncio.to_thread(self._recognize, text, timings),
        )
        timings["ner_and_text_ms"] = _ms(time.perf_counter() - t)
        t = time.perf_counter()
        threshold, sentences, salience = await asyncio.to_thread(
            self._entities_and_salience, text, tagged, v_text
        )
        timings["salience_ms"] = _ms(time.perf_counter() - t)
        t = time.perf_counter()
        keywords, chosen = self._keywords(salience)
        timings["keywords_ms"] = _ms(time.perf_counter() - t)
        return _Keyphrases(threshold, sentences, salience, keywords, chosen, v_text)

    def _recognize(self, text: str, timings: dict[str, float]) -> NEROutput:
        t = time.perf_counter()
        tagged = self.ner.recognize(text)
        timings["ner_ms"] = _ms(time.perf_counter() - t)
        return tagged

    def _timed_encode(self, texts: list[str], key: str, timings: dict[str, float]) -> np.ndarray:
        t = time.perf_counter()
        vectors = self.encoder.encode(texts)
        timings[key] = _ms(time.perf_counter() - t)
        return vectors

    def _entities_and_salience(
        self, text: str, tagged: NEROutput, v_text: np.ndarray
    ) -> tuple[float | None, list[str], SalienceResult]:
        s = self.settings
        units = clean_units(
            [u for u in aggregate_units(tagged.tokens, text) if u.label in s.ner.labels],
            text,
            max_tokens=s.ner.max_entity_tokens,
        )
        kept, threshold = select_by_dynamic_threshold(
            units,
            initial=s.ner.threshold_init,
            step=s.ner.threshold_step,
            floor=s.ner.threshold_floor,
            min_entities=s.ner.min_entities,
        )
        entities = merge_variants(kept, tagged.sentences)
        sentences = [text[a:b] for a, b in tagged.sentences]
        salience = score_salience(
            entities, sentences, PostView(text, v_text), self.encoder, s.keywords.mentions
        )
        return threshold, sentences, salience

    def _keywords(self, salience: SalienceResult) -> tuple[list[Keyword], list[int]]:
        entities = salience.entities
        if not entities:
            return [], []
        picks = select_keywords(
            [e.salience for e in entities],
            similarity_matrix(salience.entity_vectors),
            self.settings.keywords,
        )
        keywords = [
            Keyword(
                text=entities[p.index].text,
                label=entities[p.index].label,
                salience=entities[p.index].salience,
                mmr_score=round(p.mmr, 6),
                lambda_k=round(p.lambda_k, 6),
            )
            for p in picks
        ]
        return keywords, [p.index for p in picks]

    def _empty_result(self, found_notes: list[Note], started: float) -> Stage1Result:
        return Stage1Result(
            entities=[],
            threshold=None,
            keywords=[],
            query="",
            web=[],
            wikipedia=[],
            sources=[],
            timings_ms={"total_ms": _ms(time.perf_counter() - started)},
            notes=found_notes,
        )


async def _nothing() -> tuple[list[WebResult], list[SourceStatus]]:
    return [], []


def _with_counter(main: list[WebResult], counter: list[WebResult], limit: int) -> list[WebResult]:
    """The main query's results, then up to ``limit`` of the counter query's not already
    there, each marked as found by it."""
    seen = {hit.url for hit in main}
    extra = [hit.model_copy(update={"query": "counter"}) for hit in counter if hit.url not in seen]
    return [*main, *extra[:limit]]


async def _off(name: str, detail: str) -> tuple[list[Any], Any]:
    status = SourceStatus(name=name, status="disabled", detail=detail)
    return [], [status] if name == "web" else status
