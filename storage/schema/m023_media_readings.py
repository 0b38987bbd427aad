"""Migration m023: what was read from a check's images kept with the check until it
runs, beside what was heard in its voice note, in one table.

An image is read where the request is taken (the service reads a post once), and the
image is never kept: the check's stored post holds the text read from it under its
marker, but not what reading found besides (``Report.images``: each image's hash, size,
pixel size, the text's confidence, the stamp-like words, notes). A check run from the
store (a queued check on a worker, a check resumed after a crash) read only its text
again, and its report and card lost its images, as they lost what was heard before m022.
``media_readings`` keeps both: the images' findings, the voice note's transcript (if
any), and whether the post had a caption of its own, one row per check that had an
image or a voice note, dropped with its check; the rows of m022's ``heard_notes`` move
here, and that table goes. The purge deletes a row with the post's text.
"""

from __future__ import annotations

from ..sql import StoreDatabase
from .shared import CASCADE

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute(
        f"""
        CREATE TABLE media_readings (
            check_id TEXT PRIMARY KEY {CASCADE},
            findings_json TEXT NOT NULL,
            heard_json TEXT,
            caption INTEGER NOT NULL
        )
        """
    )
    db.execute(
        "INSERT INTO media_readings (check_id, findings_json, heard_json, caption)"
        " SELECT check_id, '[]', transcript_json, caption FROM heard_notes"
    )
    db.execute("DROP TABLE heard_notes")
