"""Migration m022: what was heard in a check's voice note, kept with the check until it
runs.

A voice note is heard where the request is taken (the service reads a post once), and
the sound is never kept: the check's stored post holds the words heard in its text, but
not the transcript itself (``Report.heard``: the words, their language, the format, the
duration, which transcriber). A check run from the store (a queued check on a worker, a
check resumed after a crash) read only its text again, and its report and card lost what
was heard. ``heard_notes`` keeps the transcript and whether the post had a caption of its
own, one row per check that had a voice note; the purge deletes it with the post's text.
"""

from __future__ import annotations

from ..sql import StoreDatabase

__all__ = ["apply"]


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    db.execute(
        """
        CREATE TABLE heard_notes (
            check_id TEXT PRIMARY KEY REFERENCES checks(id),
            transcript_json TEXT NOT NULL,
            caption INTEGER NOT NULL
        )
        """
    )
