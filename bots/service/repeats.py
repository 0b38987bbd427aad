"""Near repeats: which stored post a new one may be a forward of.

The stored posts of the repeat window are kept as unit vectors of their canonical
text (:mod:`bots.service.near`); a new post's nearest one, in the same reply language,
is its original when the cosine reaches ``service.near_threshold`` and no negation
or number differs between them. The CPU work runs in worker threads.
"""

from __future__ import annotations

import asyncio
import datetime as dt

import numpy as np

from storage.other_chats import may_answer
from storage.rows import CheckRow
from storage.store import CheckStore
from zofia_engine.ports import TextEncoder
from zofia_engine.post import ReadPost

from .near import NearDuplicateIndex, canonical_text, same_particulars
from .records import Admission
from .settings import ServiceSettings

__all__ = ["NearRepeats", "post_vector"]

# How many nearest stored checks in other reply languages (or that may not answer the
# asker's chat) a near repeat may pass over.
_NEAR_CANDIDATES = 4


def post_vector(encoder: TextEncoder, text: str) -> np.ndarray:
    """The vector a post is stored and searched with: its cleaned text without forward
    decorations (:func:`~bots.service.near.canonical_text`), float32. Blocking."""
    return np.asarray(encoder.encode([canonical_text(text)])[0], dtype=np.float32)


class NearRepeats:
    """The posts a near repeat may be answered from, and the search among them.

    Args:
        store: where the vectors and the originals are read.
        encoder: the sentence encoder (its dimension sizes the index).
        settings: the ``[service]`` section (the threshold).
    """

    def __init__(self, store: CheckStore, encoder: TextEncoder, settings: ServiceSettings) -> None:
        self.store = store
        self.encoder = encoder
        self.settings = settings
        self.index = NearDuplicateIndex()  # sized to the encoder by load()
        self._seen_row = 0  # the newest stored vector the index has taken in

    async def load(self, since: dt.datetime) -> None:
        """Size the index to the encoder and fill it with the posts stored since ``since``."""
        dim = await asyncio.to_thread(lambda: self.encoder.dimension)
        self.index = NearDuplicateIndex(dim)
        self._seen_row = self.store.vectors.last_row()  # read first: no vector is missed
        ids, vectors = self.store.vectors.load(since=since)
        if len(ids) and vectors.shape[1] == dim:  # vectors of another encoder never match
            self.index.load(ids, vectors)

    def keep_since(self, since: dt.datetime) -> None:
        """Forget every post a repeat can no longer be answered from (blocking). A post
        added meanwhile is newer than ``since``, so it stays."""
        self.index.keep_only(self.store.vectors.answerable_ids(since=since))

    def catch_up(self) -> int:
        """Take in the vectors other processes stored since the last look (blocking): one
        indexed read of the rows after the newest seen. Returns how many were new."""
        ids, blobs, self._seen_row = self.store.vectors.after(self._seen_row)
        dim = self.index.dim
        for check_id, blob in zip(ids, blobs, strict=True):
            if len(blob) == 4 * dim:  # another encoder's vectors never match
                self.index.add(check_id, np.frombuffer(blob, dtype="<f4").astype(np.float32))
        return len(ids)

    def add(self, check_id: str, vector: np.ndarray) -> None:
        self.index.add(check_id, vector)

    async def vector(self, text: str) -> np.ndarray:
        """The post's vector for near-repeat search (:func:`post_vector`), off the loop."""
        return await asyncio.to_thread(post_vector, self.encoder, text)

    def original(
        self, vector: np.ndarray, read: ReadPost, since: dt.datetime, asker: Admission
    ) -> tuple[CheckRow, float] | None:
        """The stored check the post ``read`` repeats, with the cosine, or ``None``: the
        nearest in the post's reply language, stored since ``since``, that may answer
        the chat ``asker`` asks in (:func:`~storage.other_chats.may_answer`); a few
        nearer ones in other languages or chats are passed over. ``vector`` is the
        post's (:func:`post_vector`). The vectors other processes stored since the last
        search are taken in first (:meth:`catch_up`). Blocking: run it in a worker
        thread."""
        self.catch_up()
        passed: set[str] = set()
        for _ in range(_NEAR_CANDIDATES):
            near = self.index.nearest(
                vector, threshold=self.settings.near_threshold, exclude=passed or None
            )
            if near is None:
                return None
            original = self.store.checks.get(near[0])
            if original is not None and (
                original.language != read.post.language
                or not may_answer(original, asker.platform, asker.chat)
            ):
                passed.add(near[0])
                continue
            if (
                original is None
                or original.created_at < since
                or original.post_text is None
                # Cosine misses an inserted "not" or a changed number: a different claim.
                or not same_particulars(original.post_text, read.text)
            ):
                return None
            return original, near[1]
        return None
