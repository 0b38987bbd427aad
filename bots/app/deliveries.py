"""A bot process delivering its platform's cards and corrections while it runs.

The mode decides how (:meth:`CheckService.serving
<bots.service.checks.CheckService.serving>`): with the store on PostgreSQL every bot
process takes jobs from its platform's deliver queue, so a card is posted by whichever
replica is alive when its check ends, and the same queue brings the ``correct`` jobs of
verdicts a moderator changed (:mod:`bots.service.queue.corrections`); on SQLite the bot
posts each card itself, and finds corrections due by polling the store
(:func:`bots.service.corrections.correcting`). A queued bot also answers ``/healthz``
and ``/metrics`` on ``[queue] health_port`` meanwhile.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from bots.service.checks import CheckService
from bots.service.delivery import PostCard
from bots.service.records import SendCorrection

from .health import serving_health
from .settings import Settings

__all__ = ["delivering"]


@contextlib.asynccontextmanager
async def delivering(
    settings: Settings,
    service: CheckService,
    platform: str,
    post_card: PostCard,
    correct: SendCorrection | None = None,
) -> AsyncIterator[None]:
    """Deliver ``platform``'s cards (``post_card``) and, with ``correct``, its
    corrections, for the block; with probes to answer, a health server beside them."""
    async with service.serving(platform, post_card, correct) as probes:
        if not probes:  # nothing to tell a health probe of (the local mode)
            yield
            return
        async with serving_health(settings.queue.health_port, probes):
            yield
