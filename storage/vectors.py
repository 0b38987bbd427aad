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
from .locked import LockedDatabase
from .rows import to_iso
from .sql import first_row

__all__ = ["Vectors"]


class Vectors:
    """Reads of ``post_vectors`` (and which checks a repeat may be answered from).

    Args:
        db: the store's database, with its lock and clock.
    """

    def __init__(self, db: LockedDatabase) -> None:
        self.db = db

    def answerable_ids(self, since: dt.datetime) -> list[str]:
        """The checks a repeat may be answered from, created at or after ``since``."""
        with self.db.lock:
            rows = self.db.execute(
                f"SELECT c.id FROM checks c WHERE c.created_at >= ? AND {ANSWERABLE}",
                [to_iso(since)],
            ).fetchall()
        return [row[0] for row in rows]

    def load(self, since: dt.datetime | None = None) -> tuple[list[str], npt.NDArray[np.float32]]:
        """Post vectors of the checks a near repeat may be answered from.

        Those are ``done`` originals whose report is intact, created at or after
        ``since``. Should the encoder have changed, only vectors of the
        dimension of the newest stored vector are returned. One query reads the
        blobs straight into a preallocated matrix (100k × 384: about 1 s).

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
            f"SELECT v.check_id, v.vector FROM post_vectors v {join} checks c"
            f" ON c.id = v.check_id WHERE v.dim = ? AND {ANSWERABLE}"
        )
        params: list[Any] = []
        if since is not None:
            sql += " AND c.created_at >= ?"
            params.append(to_iso(since))
        with self.db.lock:
            newest = self.db.execute(
                "SELECT dim FROM post_vectors ORDER BY rowid DESC LIMIT 1"
            ).fetchone()
            if newest is None:
                return [], np.empty((0, 0), dtype=np.float32)
            dim = int(newest[0])
            (stored,) = first_row(self.db.execute("SELECT count(*) FROM post_vectors"))
            # Little-endian like the blobs, so each row is a plain memcpy into the buffer.
            matrix = np.empty((stored, dim), dtype="<f4")
            buffer = matrix.data.cast("B")
            width = 4 * dim
            ids: list[str] = []
            for index, (check_id, blob) in enumerate(
                self.db.execute(f"{sql} ORDER BY v.rowid", [dim, *params])
            ):
                if index == stored:  # another process added rows between the two queries
                    break
                buffer[index * width : (index + 1) * width] = blob
                ids.append(check_id)
        if len(ids) < stored:
            matrix = matrix[: len(ids)].copy()
        return ids, matrix.astype(np.float32, copy=False)

    def after(self, rowid: int) -> tuple[list[str], list[bytes], int]:
        """Post vectors stored after row ``rowid`` (another process's checks), of checks a
        repeat may be answered from: their ids, little-endian float32 blobs, and the
        newest row seen (``rowid`` when none is newer)."""
        sql = (
            "SELECT v.rowid, v.check_id, v.vector FROM post_vectors v JOIN checks c"
            f" ON c.id = v.check_id WHERE v.rowid > ? AND {ANSWERABLE} ORDER BY v.rowid"
        )
        with self.db.lock:
            rows = self.db.execute(sql, [rowid]).fetchall()
        if not rows:
            return [], [], rowid
        return [row[1] for row in rows], [bytes(row[2]) for row in rows], int(rows[-1][0])

    def last_row(self) -> int:
        """The row of the newest stored post vector (0: none)."""
        with self.db.lock:
            (newest,) = first_row(self.db.execute("SELECT max(rowid) FROM post_vectors"))
        return int(newest or 0)
