"""Weighing one check's evidence: published fact-checks of the post, each document's
stance on the core claim, and how far each source can be trusted.

The fact-check lookup with the post's first sentence starts with the check, beside
Stage 1; the one with the core claim as soon as the extractor has it. The stance calls
(one per web document, at the full depth) follow. Sources are rated as soon as the
documents are in, with no call.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Sequence

from ..config import EngineSettings
from ..llm.session import CheckSession
from ..report import EvidenceItem
from ..retrieval.credibility import SourceQuality
from ..retrieval.factcheck.base import language_code
from ..retrieval.factcheck.lookup import FactCheckLookup, Matched
from .context import PanelContext, reversed_support
from .stance import rate_sources, weigh_stances

__all__ = ["Weighing", "factcheck_items", "reversed_marked"]


def factcheck_items(matched: Sequence[Matched]) -> list[EvidenceItem]:
    """Published fact-checks as evidence ``fc-1``, ``fc-2`` …, best match first."""
    items = []
    for n, (review, _) in enumerate(matched, 1):
        who = f" ({review.claimant})" if review.claimant else ""
        items.append(
            EvidenceItem(
                id=f"fc-{n}",
                source="factcheck",
                provider=review.publisher_site or review.publisher,
                title=review.title or review.claim,
                url=review.url,
                text=f'Claim reviewed: "{review.claim}"{who}. Rating: {review.rating}.',
                published=review.reviewed,
                publisher=review.publisher,
                rating=review.rating,
            )
        )
    return items


class Weighing:
    """The evidence weighing of one check.

    Args:
        settings: the engine's settings (``[evidence]``, ``[factcheck]``).
        session: the check's LLM session, for the stance calls.
        panel: the check's shared material; ``panel.evidence`` is rated and weighed.
        lookup: the fact-check lookup (no backends: offline).
        cutoff: reviews published after it are left out (the day before the post).
    """

    def __init__(
        self,
        settings: EngineSettings,
        session: CheckSession,
        panel: PanelContext,
        lookup: FactCheckLookup,
        cutoff: dt.date | None,
    ) -> None:
        self.settings = settings
        self.session = session
        self.panel = panel
        self.lookup = lookup
        self.cutoff = cutoff
        self.quality = SourceQuality() if settings.evidence.credibility else None
        self.notes: list[str] = []

    async def published(self, texts: Sequence[str]) -> list[Matched]:
        """Fact-checks of ``texts``; a failing source becomes a note."""
        # The post's own language: a fact-check of it is written in it (the reply
        # language is only what the panel writes in).
        language = self.panel.post_language or language_code(self.panel.language or "English")
        matched, statuses = await self.lookup.find(texts, language=language, cutoff=self.cutoff)
        for status in statuses:
            note = ""
            if status.status == "failed":
                note = f"{status.name} failed: {status.detail}"
            elif status.status == "disabled":
                note = "no fact-check source configured: no published fact-checks"
            if note and not any(n.startswith(note.split(":")[0]) for n in self.notes):
                self.notes.append(note)  # once per source, not once per lookup
        return matched

    def rated(self, items: list[EvidenceItem]) -> list[EvidenceItem]:
        """``items`` with their sources rated (as they are, with credibility off)."""
        return items if self.quality is None else rate_sources(items, self.quality)

    async def factchecks(
        self, core: str | None, earlier: Awaitable[list[Matched]]
    ) -> list[EvidenceItem]:
        """The published fact-checks of the core claim and of the first sentence
        (``earlier``), best match first, their sources rated."""
        by_claim: Awaitable[list[Matched]] = (
            self.published([core]) if core and self.lookup.backends else _none()
        )
        first, second = await asyncio.gather(earlier, by_claim)
        matched = list({review.url: (review, sim) for review, sim in [*first, *second]}.values())
        matched.sort(key=lambda pair: -pair[1])
        return self.rated(factcheck_items(matched[: self.settings.factcheck.max_results]))

    async def stances(self, core: str | None, items: list[EvidenceItem]) -> list[EvidenceItem]:
        """``items`` with every web document's stance on ``core`` (one call each, all at
        once; ToE's evidence objects), when ``[evidence] stance`` is on."""
        s = self.settings.evidence
        if not core or not s.stance:
            return items
        return await weigh_stances(self.session, self.panel, core, items, s.max_stance_documents)


def reversed_marked(items: Sequence[EvidenceItem]) -> list[EvidenceItem]:
    """``items`` with support from a source whose support counts against the post marked
    ``reversed`` (AgentFact's reverse use)."""
    return [
        item.model_copy(update={"reversed": True}) if reversed_support(item) else item
        for item in items
    ]


async def _none() -> list[Matched]:
    return []
