"""A finished check's report, stored once, wherever its engine ran (this process, or a
worker): a recheck (``zofia check --recheck``) that came to another verdict makes due,
in the same transaction, the cards of the earlier checks of its text that now show
another verdict, as a review does (the verdict in force:
:meth:`storage.shown_cards.ShownCards.word_in_force`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from storage.store import CheckStore
from zofia_engine.report import Report

from .records import QueueDue

__all__ = ["save_report"]


def save_report(
    store: CheckStore,
    check_id: str,
    report: Report,
    vector: npt.NDArray[np.float32] | None,
    queue_due: QueueDue,
) -> None:
    """Store a finished check's report (:meth:`storage.reports.Reports.save`, same
    errors) with its post's vector, its early report dropped, and, for a recheck, make
    due the cards it changes, with their corrections queued as the mode queues them
    (``queue_due``), in one write transaction (blocking)."""
    with store.write():
        store.reports.save(check_id, report, vector=vector)
        store.reports.drop_early(check_id)
        row = store.checks.get(check_id)
        if row is not None and row.forced:
            queue_due(store.shown_cards.mark_due(check_id))
