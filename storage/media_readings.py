"""``store.media_readings``: what was read from a check's images and heard in its voice
note, kept until the check runs.

Neither an image nor the sound of a voice note is ever stored, and the words read or
heard are in the check's post text, under their markers. What reading found besides those
words is kept here: each image's finding (:class:`~zofia_engine.records.images.ImageFinding`:
its hash, size and pixel size, the text read with its confidence, the stamp-like words,
notes), the voice note's transcript (:class:`~zofia_engine.records.audio.Transcript`),
and whether the post had a caption of its own, so that a check run from the store (a
queued check on a worker, a check resumed after a crash) reports what was read and
heard as one run where it was taken does. Purged with the post's text
(:mod:`storage.retention`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from zofia_engine.post import ReadPost
from zofia_engine.records.audio import Transcript
from zofia_engine.records.images import ImageFinding

from .keys import storable_text
from .locked import StorePart

__all__ = ["MediaReading", "MediaReadings"]


@dataclass(frozen=True)
class MediaReading:
    """What reading a check's post found besides its text, as
    :class:`~zofia_engine.post.ReadPost` holds it: ``findings``, what was read from each
    of its images, in order; ``heard``, what was heard in its voice note; ``caption``,
    whether the post had text of its own besides the words read and heard."""

    findings: tuple[ImageFinding, ...] = ()
    heard: Transcript | None = None
    caption: bool = True

    @classmethod
    def of(cls, read: ReadPost) -> MediaReading:
        """What ``read`` found besides its text."""
        return cls(read.findings, read.heard, read.caption)

    def onto(self, read: ReadPost) -> ReadPost:
        """``read`` (the same post read again from its stored text) with what was found
        when it was first read."""
        return read.model_copy(
            update={"findings": self.findings, "heard": self.heard, "caption": self.caption}
        )


class MediaReadings(StorePart):
    """What was read from the checks' images and heard in their voice notes, by check."""

    def keep(self, check_id: str, reading: MediaReading) -> None:
        """Keep what was read and heard in check ``check_id``'s post (in the caller's
        write transaction, when there is one).

        Raises:
            CheckNotFoundError: no such check.
        """
        findings = [finding.model_dump(mode="json") for finding in reading.findings]
        heard = reading.heard.model_dump_json() if reading.heard is not None else None
        with self.db.write():
            self.db.require_check(check_id)
            row = {
                "check_id": check_id,
                "findings_json": storable_text(json.dumps(findings, ensure_ascii=False)),
                "heard_json": storable_text(heard) if heard is not None else None,
                "caption": int(reading.caption),
            }
            self.db.table("media_readings").upsert(row, pk=("check_id",))

    def get(self, check_id: str) -> MediaReading | None:
        """What was read and heard in the check's post; ``None`` when it had neither
        image nor voice note (or the purge took it)."""
        row = self.db.first(
            "SELECT findings_json, heard_json, caption FROM media_readings WHERE check_id = ?",
            [check_id],
        )
        if row is None:
            return None
        findings = tuple(ImageFinding.model_validate(f) for f in json.loads(row[0]))
        heard = Transcript.model_validate_json(row[1]) if row[1] is not None else None
        return MediaReading(findings, heard, bool(row[2]))
