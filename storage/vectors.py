"""``store.vectors``: the post vectors a near repeat is searched among.

:class:`Vectors` reads all of the repeat window at start, then, in every process, the
rows other processes stored since the newest one seen. Reports write them
(:meth:`~storage.reports.Reports.save`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import numpy.typing as npt

from .checks import ANSWERABLE
from .locked import StorePart
from .rows import to_iso

#: check ids asked about in one ``IN`` list (SQLite's default limit is far above it)
_IDS_PER_QUERY = 500

__all__ = ["LOAD_BATCH", "Vectors"]

#: how many stored vectors :meth:`Vectors.load` reads at a time
LOAD_BATCH = 1000


class Vectors(StorePart):
    """Reads of ``post_vectors`` (and which checks a repeat may be answered from)."""

    def answerable_ids(self, since: dt.datetime) -> list[str]:
        """The checks a repeat may be answered from, created at or after ``since``."""
        rows = self.db.rows(
            f"SELECT c.id FROM checks c WHERE c.created_at >= ? AND {ANSWERABLE}",
            [to_iso(since)],
        )
        return [row[0] for row in rows]

    def load(self, since: dt.datetime | None = None) -> tuple[list[str], npt.NDArray[np.float32]]:
        """Post vectors of the checks a near repeat may be answered from.

        Those are ``done`` originals whose report is intact, created at or after
        ``since``. Should the encoder have changed, only vectors of the
        dimension of the newest stored vector are returned. The blobs are read
        straight into a preallocated matrix (100k × 384: about 1 s), in batches of
        :data:`LOAD_BATCH` rows by row order, so that no more than one batch of them is
        held besides the matrix, and the store's lock is free between batches.

        Args:
            since: the start of the repeat window; ``None`` for all time.

        Returns:
            Check ids, in the order their vectors were stored, and the vectors
            as an ``(n, dim)`` float32 matrix (``(0, 0)`` when there are none).

        Raises:
            ValueError: ``since`` is naive.
        """
        # Scan post_vectors in storage order, looking each check up by key: no sort
        # (SQLite's CROSS JOIN fixes that join order; PostgreSQL plans its own).
        join = "JOIN" if self.db.is_postgres else "CROSS JOIN"
        sql = (
            f"SELECT v.rowid, v.check_id, v.vector FROM post_vectors v {join} checks c"
            f" ON c.id = v.check_id WHERE v.dim = ? AND v.rowid > ? AND v.rowid <= ?"
            f" AND {ANSWERABLE}"
        )
        params: list[Any] = []
        if since is not None:
            sql += " AND c.created_at >= ?"
            params.append(to_iso(since))
        sql += " ORDER BY v.rowid LIMIT ?"
        newest = self.db.first("SELECT dim FROM post_vectors ORDER BY rowid DESC LIMIT 1")
        if newest is None:
            return [], np.empty((0, 0), dtype=np.float32)
        dim = int(newest[0])
        # What is stored now: rows stored while this reads are the next catch-up's.
        stored, last = self.db.one("SELECT count(*), max(rowid) FROM post_vectors")
        # Little-endian like the blobs, so each row is a plain memcpy into the buffer.
        matrix = np.empty((int(stored), dim), dtype="<f4")
        buffer = matrix.data.cast("B")
        width = 4 * dim
        ids: list[str] = []
        after = 0
        while len(ids) < len(matrix):
            batch = self.db.rows(sql, [dim, after, last or 0, *params, LOAD_BATCH])
            # No more than counted: on PostgreSQL a row numbered below ``last`` may commit
            # after the count.
            for _, check_id, blob in batch[: len(matrix) - len(ids)]:
                buffer[len(ids) * width : (len(ids) + 1) * width] = blob
                ids.append(check_id)
            if len(batch) < LOAD_BATCH:
                break
            after = int(batch[-1][0])
        if len(ids) < len(matrix):
            matrix = matrix[: len(ids)].copy()
        return ids, matrix.astype(np.float32, copy=False)

    def after(self, rowid: int) -> tuple[list[str], list[bytes], int]:
        """Post vectors stored after row ``rowid`` (another process's checks), of checks a
        repeat may be answered from: their ids, little-endian float32 blobs, and the
        newest row seen (``rowid`` when none is newer)."""
        # The new rows by their rowid range first, then which of them are answerable: one
        # join would let SQLite's planner start from every done check instead (150 ms at
        # 40,000 checks, on every near-repeat search).
        rows = self.db.rows(
            "SELECT rowid, check_id, vector FROM post_vectors WHERE rowid > ? ORDER BY rowid",
            [rowid],
        )
        if not rows:
            return [], [], rowid
        answerable: set[str] = set()
        for start in range(0, len(rows), _IDS_PER_QUERY):
            ids = [row[1] for row in rows[start : start + _IDS_PER_QUERY]]
            marks = ", ".join("?" for _ in ids)
            found = self.db.rows(
                f"SELECT c.id FROM checks c WHERE c.id IN ({marks}) AND {ANSWERABLE}", ids
            )
            answerable.update(row[0] for row in found)
        kept = [row for row in rows if row[1] in answerable]
        return [row[1] for row in kept], [bytes(row[2]) for row in kept], int(rows[-1][0])

    def last_row(self) -> int:
        """The row of the newest stored post vector (0: none)."""
        (newest,) = self.db.one("SELECT max(rowid) FROM post_vectors")
        return int(newest or 0)
