"""``store.heard``: what was heard in a check's voice note, kept until the check runs.

The sound of a voice note is never stored, and its words are in the check's post text;
the transcript itself (:class:`~zofia_engine.records.audio.Transcript`) and whether the
post had a caption of its own are kept here, so that a check run from the store (a
queued check on a worker, a check resumed after a crash) reports what was heard as one
run where it was taken does. Purged with the post's text (:mod:`storage.retention`).
"""

from __future__ import annotations

from dataclasses import dataclass

from zofia_engine.records.audio import Transcript

from .locked import LockedDatabase

__all__ = ["HeardNote", "HeardNotes"]


@dataclass(frozen=True)
class HeardNote:
    """A check's voice note as heard: the transcript, and ``caption``: whether the post
    had text of its own besides the words heard."""

    transcript: Transcript
    caption: bool


class HeardNotes:
    """The voice notes heard, by check.

    Args:
        db: the store's database, with its lock and clock.
    """

    def __init__(self, db: LockedDatabase) -> None:
        self.db = db

    def keep(self, check_id: str, note: HeardNote) -> None:
        """Keep what was heard in check ``check_id``'s voice note (in the caller's write
        transaction, when there is one).

        Raises:
            CheckNotFoundError: no such check.
        """
        with self.db.write():
            self.db.require_check(check_id)
            row = {
                "check_id": check_id,
                "transcript_json": note.transcript.model_dump_json(),
                "caption": int(note.caption),
            }
            self.db.table("heard_notes").upsert(row, pk=("check_id",))

    def get(self, check_id: str) -> HeardNote | None:
        """What was heard in the check's voice note; ``None`` when it had none (or the
        purge took it)."""
        row = self.db.first(
            "SELECT transcript_json, caption FROM heard_notes WHERE check_id = ?", [check_id]
        )
        if row is None:
            return None
        return HeardNote(Transcript.model_validate_json(row[0]), bool(row[1]))
