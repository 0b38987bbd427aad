"""Ending a check on the queue: its joiners with it, its cards queued, its outcome
published, in one transaction; and the sweep that ends the checks nobody runs any more.

A check is ``queued`` or ``running`` while a job of the queue will end it. When none
will (its job failed for good while even ending it failed, or was deleted by hand),
:func:`sweep_unfinished` ends it, with its joiners, as failed, and its requesters get
that sentence instead of waiting forever; later copies of the post no longer join it.
The stalled-job task runs the sweep (:mod:`bots.service.queue.worker`).
"""

from __future__ import annotations

import datetime as dt
import logging

from storage.postgres import PostgresDatabase
from storage.rows import to_iso
from storage.store import CheckStore

from .events import publish
from .jobs import CHECK_TASK, DELIVER_TASK, defer, deliver_queue

__all__ = ["UNFINISHED_AFTER", "end_check", "sweep_unfinished", "unfinished_without_job"]

log = logging.getLogger(__name__)

#: a check queued or running this long with no job left to end it is ended by the sweep
UNFINISHED_AFTER = dt.timedelta(minutes=10)
#: why the sweep failed a check
LEFT_UNFINISHED = "it was left unfinished: no job was running it any more"
_SWEEP_BATCH = 100

# The checks (an original, or one that joined it) still queued or running whose original
# has no job waiting or running: nothing will end them.
_UNFINISHED = f"""
    SELECT DISTINCT coalesce(c.repeat_of, c.id) FROM checks c
    WHERE c.status IN ('queued', 'running') AND c.created_at < ?
    AND NOT EXISTS (
        SELECT 1 FROM procrastinate_jobs j
        WHERE j.task_name = '{CHECK_TASK}' AND j.status IN ('todo', 'doing')
        AND j.args ->> 'check_id' = coalesce(c.repeat_of, c.id)
    )
    LIMIT {_SWEEP_BATCH}
"""


def end_check(
    store: CheckStore,
    db: PostgresDatabase,
    check_id: str,
    error: str | None,
    *,
    deliver_at: dt.datetime,
) -> None:
    """In one transaction: fail the check if it failed (a check whose report is stored
    stays done, and a failed one keeps its reason), end its joiners as it ended, queue a
    ``deliver`` job (not before ``deliver_at``) for every card still to post, and
    publish the outcome on commit.

    Raises:
        CheckNotFoundError: no such check.
        psycopg.Error: the database refused or was lost; nothing was written.
    """
    with store.write():
        row = store.checks.get(check_id)
        if row is not None and row.status == "done":
            error = None  # its report is stored: a later failure does not undo it
        elif row is not None and row.status == "failed" and error is not None:
            error = row.error or error  # it keeps the reason it failed for
        if error is not None:
            store.checks.set_status(check_id, "failed", error=error)
        joiners = store.checks.joiners(check_id)
        for joiner, status in joiners:
            if status in ("queued", "running"):
                store.checks.set_status(joiner, "failed" if error else "done", error=error or "")
        # Every joiner's card: ended here, or already by a waiter that saw the outcome.
        ids = [check_id, *(joiner for joiner, _ in joiners)]
        for waiting, platform in store.deliveries.pending(ids):
            defer(
                db,
                DELIVER_TASK,
                deliver_queue(platform),
                {"check_id": waiting, "not_before": deliver_at.isoformat()},
                lock=f"deliver:{waiting}",
                queueing_lock=f"deliver:{waiting}",  # one waiting job per card
            )
        publish(db, check_id, "failed" if error else "done")  # the outcome is in the store


def unfinished_without_job(db: PostgresDatabase, older_than: dt.datetime) -> list[str]:
    """The original checks created before ``older_than`` that (or whose joiners) are
    still queued or running with no check job waiting or running for them."""
    rows = db.execute(_UNFINISHED, [to_iso(older_than)]).fetchall()
    return [str(row[0]) for row in rows]


def sweep_unfinished(
    store: CheckStore, db: PostgresDatabase, *, older_than: dt.timedelta = UNFINISHED_AFTER
) -> list[str]:
    """End every check nothing will end any more (see :func:`unfinished_without_job`):
    as failed, with its joiners, their cards queued; an original already done ends its
    joiners as done. Each in its own transaction; one that cannot be ended is logged and
    left for the next sweep.

    Returns:
        The originals ended.
    """
    now = store.clock()
    ended = []
    for check_id in unfinished_without_job(db, now - older_than):
        try:
            end_check(store, db, check_id, LEFT_UNFINISHED, deliver_at=now)
        except Exception:
            log.exception("unfinished check %s not ended; the next sweep tries again", check_id)
            continue
        log.warning("check %s was left unfinished with no job: ended as failed", check_id)
        ended.append(check_id)
    return ended
