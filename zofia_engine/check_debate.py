"""One check's debate: the full debate (or RADAR's) when the evidence can settle a
verdict, its opening round alone when nothing can, or, with the debate left out, the
judge's ruling on the evidence pool alone. What the turns' editor dropped (quotes found
nowhere, repeats) is added to the check's count."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .agents.context import PanelContext
from .agents.debate import DebateOutcome, Moderator, hold_debate, hold_opening_round
from .agents.judge import EvidenceSettled, final_ruling
from .agents.quotes import Haystack
from .agents.radar import hold_radar_debate
from .config import EngineSettings
from .llm.base import ChatMessage
from .llm.session import CheckSession
from .report import OUTCOMES, Debate, Dropped, JudgeRuling
from .run_progress import Progress

__all__ = ["CheckDebate"]


@dataclass
class CheckDebate:
    """The debate step of one check.

    Args:
        settings: the engine's settings (``[debate]``, ``[agents] depth``).
        session: the check's LLM session.
        panel: the check's shared material.
        progress: where each round's ruling is announced.
        dropped: the check's count of what was dropped; the editor's is added to it.
        held: whether there is a debate at all (``False``: the judge rules alone).
    """

    settings: EngineSettings
    session: CheckSession
    panel: PanelContext
    progress: Progress
    dropped: Dropped
    held: bool = True

    async def hold(
        self,
        pool: list[ChatMessage],
        citable: list[str],
        shown: list[str],
        sources: Haystack,
        *,
        settled: EvidenceSettled,
        full: bool,
    ) -> DebateOutcome:
        """The debate (``full``) or its opening round alone; ``shown``: the analyses'
        texts, which no turn may repeat; ``sources``: where a quoted phrase must occur."""
        session, panel, d = self.session, self.panel, self.settings.debate
        if not self.held:
            judged = await final_ruling(session, panel, pool, 0, settled=settled)
            debate = Debate(style=d.style, held=False, rulings=[judged.ruling], forced=True)
            return DebateOutcome(debate=debate, judged=judged)

        async def on_round(ruling: JudgeRuling) -> None:
            word = ruling.decision or "failed"
            await self.progress.emit("round", "debate", word, ruling.round)

        # The papers' run shows every turn; the adaptive depth shows nothing twice.
        full_run = self.settings.agents.depth == "full"
        moderator = Moderator.of(
            session,
            panel,
            d,
            sources,
            shown=None if full_run else shown,
            on_round=on_round,
            settled=settled,
        )
        try:
            if not full:
                why: Literal["no_evidence", "settled"] = (
                    "no_evidence" if settled.allowed == OUTCOMES else "settled"
                )
                return await hold_opening_round(moderator, pool, citable, stopped_by=why)
            if d.style == "radar":
                return await hold_radar_debate(moderator, pool, citable, max_rounds=d.max_rounds)
            return await hold_debate(moderator, pool, citable, max_rounds=d.max_rounds)
        finally:
            self.dropped.quotes += moderator.editor.dropped_quotes
            self.dropped.repeats += moderator.editor.repeats
