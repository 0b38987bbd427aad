"""The panel's analyses: the linguist's dimensions and the domain expert, side by side.

At the full depth they work beside the evidence step; at the adaptive depth they are
asked only once the evidence settled something (``CheckRun.gather``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from ..llm.session import CheckSession
from ..report import Analyses, ExpertFinding
from .context import PanelContext
from .expert import analyse_as_expert, detect_domain
from .linguist import analyse_language

__all__ = ["Stage", "ask_panel"]

#: Runs a named stage of the check (progress events, timings) and gives its result.
Stage = Callable[[str, Awaitable[Any]], Coroutine[Any, Any, Any]]


async def ask_panel(
    session: CheckSession,
    panel: PanelContext,
    dimensions: Sequence[str],
    stage: Stage,
    shown: asyncio.Event,
    *,
    linguist: bool = True,
    expert: bool = True,
) -> Analyses:
    """The linguist's ``dimensions`` and the domain expert (each left out when off); the
    expert reads the evidence as the panel is shown it, so it waits for ``shown``."""
    async with asyncio.TaskGroup() as tg:
        found = tg.create_task(stage("expert", _expert(session, panel, shown))) if expert else None
        read: asyncio.Task[Any] | None = (
            tg.create_task(stage("linguist", analyse_language(session, panel, list(dimensions))))
            if linguist
            else None
        )
    return Analyses(
        linguist=read.result() if read else [],
        expert=found.result() if found else None,
    )


async def _expert(
    session: CheckSession, panel: PanelContext, shown: asyncio.Event
) -> ExpertFinding:
    domain = await detect_domain(session, panel)
    await shown.wait()
    return await analyse_as_expert(session, panel, domain)
