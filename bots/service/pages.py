"""What the report pages read of the store (:mod:`bots.web.app`), each read on the
service's threads: a check and the report it shows to anyone (with the service's
reviews only: a chat's own review stays in its chat), or why there is none."""

from __future__ import annotations

from storage.store import CheckStore
from zofia_engine.report import Report

from .delivery import StoreThreads
from .records import CheckRow, Missing
from .shown import report_of

__all__ = ["ReportPages"]


class ReportPages:
    """The pages' reads of ``store``.

    Args:
        store: the open store (a bot's own, or one opened on the same database).
        threads: the threads to read on (a service's; by default the pages' own).
    """

    def __init__(self, store: CheckStore, threads: StoreThreads | None = None) -> None:
        self.store = store
        self.threads = threads or StoreThreads()

    async def page(self, check_id: str) -> tuple[CheckRow, Report] | Missing:
        """The check and the report its public page shows, or why there is none."""
        return await self.threads.run(self._page, check_id)

    def _page(self, check_id: str) -> tuple[CheckRow, Report] | Missing:
        found = report_of(self.store, check_id, in_its_chat=False)
        if found is not None:
            return found
        row = self.store.checks.get(check_id)
        if row is None:
            return "unknown"
        if row.status in ("queued", "running"):
            return "pending"
        return "purged" if row.status == "done" else "failed"

    async def ping(self) -> None:
        """Read the store once (the health route): raises when it cannot."""
        await self.threads.run(self.store.ping)
