"""Searching again for a core claim the first search left unsettled (adaptive depth).

Stage 1 searches once, with one query built from the post's keywords. When that query
misses, the answer may still be a query away. So, after the first reading, while the
core claim is unsettled: the verifier plans at most two new queries
(:mod:`.agents.planning`), those that repeat an earlier query are not run, the rest go to
every source (:func:`~.retrieval.again.search_planned`), the passages not already held
join the evidence, and the core claim is read again with the same reader. The loop stops
once the claim is settled, when a round brings nothing new to search (every query it
plans repeats one already run, or it plans none), after ``[agents] search_rounds``
rounds, or past ``search_seconds``; a round whose queries find nothing not already held
goes on to the next, which may plan better. Each round is recorded
(``Report.searches``), and its documents say they came from a planned search.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass

from .agents.context import PanelContext, web_item, wiki_item
from .agents.planning import fresh_queries, plan_queries
from .agents.weighing import Weighing
from .check_evidence import EvidenceReading
from .config import EngineSettings
from .llm.session import CheckSession
from .records.stage1 import WebResult, WikipediaEntry
from .report import ClaimResult, EvidenceItem, SearchRound
from .retrieval.again import search_planned
from .retrieval.pipeline import EntityGuidedRetrieval

__all__ = ["SearchAgain"]

SETTLED = ("supports", "refutes")


@dataclass
class SearchAgain:
    """The loop of one check.

    Args:
        settings: the engine's settings (``[agents] search_rounds`` …).
        session: the check's LLM session.
        panel: the check's shared material; found documents join its evidence.
        retrieval: Stage 1, whose sources are asked again.
        reading: the check's evidence step, whose reader reads the claim again.
        weighing: rates the new documents' sources as the first ones were.
    """

    settings: EngineSettings
    session: CheckSession
    panel: PanelContext
    retrieval: EntityGuidedRetrieval
    reading: EvidenceReading
    weighing: Weighing

    def wanted(self, claims: Sequence[ClaimResult]) -> bool:
        """Whether the loop runs for these claims: at the adaptive depth, with rounds to
        spend, for a core claim read and left unsettled."""
        agents = self.settings.agents
        if agents.depth != "adaptive" or agents.search_rounds <= 0:
            return False
        core = claims[0] if claims and claims[0].kind == "core" else None
        return core is not None and core.status == "ok" and core.label not in SETTLED

    async def run(
        self, claims: list[ClaimResult], first_query: str, *, published: dt.date | None = None
    ) -> tuple[list[ClaimResult], list[SearchRound]]:
        """``claims`` with the core claim read again after each round, and the rounds."""
        if not self.wanted(claims):
            return claims, []
        core, agents = claims[0], self.settings.agents
        tried = [first_query] if first_query else []
        started = time.monotonic()
        rounds: list[SearchRound] = []
        for number in range(1, agents.search_rounds + 1):
            if time.monotonic() - started > agents.search_seconds:
                break
            step = f"search:plan:{number}"
            proposed = await plan_queries(self.session, self.panel, core.text, tried, step)
            encoder = self.retrieval.encoder
            fresh, repeats = await fresh_queries(proposed, tried, encoder, agents.query_repeat_at)
            if not fresh:
                rounds.append(SearchRound(round=number, repeats=repeats))
                break
            tried += fresh
            found = await self._found(fresh, published)
            if not found:  # a miss: the next round may plan better
                rounds.append(SearchRound(round=number, queries=fresh, repeats=repeats))
                continue
            core = await self._read_again(claims, core, found)
            settled = core.label in SETTLED
            ids = [item.id for item in found]
            rounds.append(
                SearchRound(
                    round=number, queries=fresh, repeats=repeats, found=ids, settled=settled
                )
            )
            if settled:
                break
        return [core, *claims[1:]], rounds

    async def _found(self, queries: Sequence[str], published: dt.date | None) -> list[EvidenceItem]:
        """The documents ``queries`` find that the check does not hold yet, as evidence."""
        r, s = self.retrieval, self.settings
        web, wiki = await search_planned(
            queries,
            r.search_backends,
            r.wikipedia,
            s.wikipedia,
            max_results=s.web.max_results,
            published=published,
            language=self.panel.post_language,
        )
        items = self._items(web, wiki)
        return self.weighing.rated(items) if items else []

    def _items(self, web: list[WebResult], wiki: list[WikipediaEntry]) -> list[EvidenceItem]:
        held = self.panel.evidence
        urls = {e.url for e in held if e.url}
        titles = {e.title for e in held if e.source == "wikipedia"}
        wiki_n = sum(1 for e in held if e.id.startswith("wiki-"))
        web_n = sum(1 for e in held if e.id.startswith("web-"))
        items: list[EvidenceItem] = []
        for entry in wiki:
            if entry.title not in titles and entry.url not in urls:
                wiki_n += 1
                items.append(wiki_item(entry, wiki_n, "planned"))
        for hit in web:
            if hit.url not in urls:
                web_n += 1
                items.append(web_item(hit, web_n, "planned"))
        return items

    async def _read_again(
        self, claims: list[ClaimResult], core: ClaimResult, found: list[EvidenceItem]
    ) -> ClaimResult:
        """``core`` read against the evidence with ``found`` added."""
        self.panel.evidence = [*self.panel.evidence, *found]
        self.panel.show(await asyncio.to_thread(self.reading.shortlist, claims))
        unread = core.model_copy(
            update={
                "label": None,
                "reason": "",
                "quotes": [],
                "parts": [],
                "restated": None,
                "answer": None,
            }
        )
        (read,), _ = await self.reading.read([unread])
        return read
