"""An in-memory cosine index for near-repeat posts.

Forwarded posts come back with small changes ("Fwd: ", a hashtag line, an
emoji, a truncated tail). The check service answers such a post from a stored
report when the SBERT cosine between it and a stored post is at least
``service.near_threshold``. :class:`NearDuplicateIndex` holds the stored posts'
vectors and finds the best match.

Design:

- Rows are L2-normalised on the way in, so cosine similarity is one dot
  product; a query is a single ``matrix[:n] @ v`` in float32 (one BLAS
  matrix-vector product) followed by ``argmax``. At 100k rows of dimension
  384 that is about 150 MB of memory traffic per query (see
  ``bench/near_threshold.py`` for timings).
- ``add`` writes into a preallocated float32 matrix whose capacity doubles when
  full, so appending is amortised O(1).
- ``remove`` moves the last row into each freed slot (swap-remove), so the
  stored rows stay dense and a query never scans removed rows.
- Every mutation and every search holds one :class:`threading.Lock`: the
  service calls the index from worker threads.

Two text helpers go with it (``bench/near_threshold.py`` measures both):

- :func:`canonical_text` strips forward decorations (``Fwd:``/``Forwarded
  from X:`` headers, emoji, hashtag-only lines, ``#`` marks, spacing, case)
  before a post is encoded, so a forward of a short post still clears a strict
  threshold;
- :func:`same_particulars` catches what no cosine threshold can: a stored post
  and a new one that differ by an inserted ``not`` or a changed number score
  about 0.98, yet make opposite or different claims.
"""

from __future__ import annotations

import difflib
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["NearDuplicateIndex", "canonical_text", "same_particulars"]

#: Rows allocated the first time the index needs storage.
INITIAL_CAPACITY = 64

#: Slack in the threshold comparison: a float32 dot product of a unit vector
#: with itself can land a few ulps under 1.0, and an exact duplicate must still
#: match at ``threshold=1.0``.
SCORE_TOLERANCE = 1e-6

#: Norms at or below this count as zero (their reciprocal would overflow float32).
TINY = float(np.finfo(np.float32).tiny)


class NearDuplicateIndex:
    """Cosine nearest-neighbour search over unit vectors, with a threshold.

    Args:
        dim: the vector dimension (384 for all-MiniLM-L6-v2).

    Each stored vector is keyed by a check id. Adding an id that is already
    stored replaces its vector. A zero vector can be stored, but its cosine
    with anything is 0, so it never meets a threshold (thresholds are > 0).
    """

    def __init__(self, dim: int = 384) -> None:
        if dim <= 0:
            raise ValueError(f"dimension must be positive, got {dim}")
        self.dim = dim
        self._lock = threading.Lock()
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._ids: list[str] = []
        self._row: dict[str, int] = {}

    # --- mutation -------------------------------------------------------------

    def load(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Replace the whole contents with ``ids`` and their ``vectors`` (one row each).

        Rows are normalised to unit length. Raises ``ValueError`` on a shape
        that does not match the ids or the dimension, on repeated ids, and on
        NaN or infinite values; the index is left unchanged then.
        """
        ids = list(ids)
        array = np.asarray(vectors, dtype=np.float32)
        if array.size == 0 and not ids:
            array = array.reshape(0, self.dim)
        if array.ndim != 2 or array.shape[1] != self.dim:
            raise ValueError(f"expected vectors of shape (n, {self.dim}), got shape {array.shape}")
        if array.shape[0] != len(ids):
            raise ValueError(f"got {len(ids)} ids for {array.shape[0]} vectors")
        row = {check_id: i for i, check_id in enumerate(ids)}
        if len(row) != len(ids):
            raise ValueError("ids must be unique")
        normalised = _normalise_rows(array)
        matrix = np.zeros((max(INITIAL_CAPACITY, len(ids)), self.dim), dtype=np.float32)
        matrix[: len(ids)] = normalised
        with self._lock:
            self._matrix = matrix
            self._ids = ids
            self._row = row

    def add(self, check_id: str, vector: np.ndarray) -> None:
        """Store ``vector`` (normalised) under ``check_id``; amortised O(1).

        An id that is already stored gets the new vector in place.
        """
        unit = _normalise_rows(self._as_vector(vector)[None, :])[0]
        with self._lock:
            row = self._row.get(check_id)
            if row is None:
                row = len(self._ids)
                if row == self._matrix.shape[0]:
                    self._grow()
                self._ids.append(check_id)
                self._row[check_id] = row
            self._matrix[row] = unit

    def remove(self, check_ids: Iterable[str]) -> int:
        """Drop the given ids (unknown ones are ignored); return how many were stored.

        A single ``str`` is taken as one id, not as an iterable of characters.
        Each freed slot is filled with the current last row, so the stored rows
        stay contiguous: O(dim) per removed id.
        """
        if isinstance(check_ids, str):
            check_ids = [check_ids]
        removed = 0
        with self._lock:
            for check_id in check_ids:
                row = self._row.pop(check_id, None)
                if row is None:
                    continue
                last = len(self._ids) - 1
                if row != last:
                    moved = self._ids[last]
                    self._matrix[row] = self._matrix[last]
                    self._ids[row] = moved
                    self._row[moved] = row
                self._matrix[last] = 0.0
                self._ids.pop()
                removed += 1
        return removed

    # --- search ---------------------------------------------------------------

    def nearest(
        self,
        vector: np.ndarray,
        *,
        threshold: float,
        exclude: set[str] | None = None,
    ) -> tuple[str, float] | None:
        """The stored id most similar to ``vector`` and its cosine, if at or above ``threshold``.

        ``exclude`` names ids that must not be returned (e.g. the post's own
        check). Returns ``None`` when the index is empty, when ``vector`` is
        zero, or when no stored vector reaches ``threshold``. The score is
        clipped to 1.0. ``threshold`` must lie in (0, 1].
        """
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must lie in (0, 1], got {threshold}")
        query = self._as_vector(vector)
        query = _normalise_rows(query[None, :])[0]
        if not query.any():
            return None
        with self._lock:
            n = len(self._ids)
            if n == 0:
                return None
            scores = self._matrix[:n] @ query
            if exclude:
                rows = [r for r in (self._row.get(i) for i in exclude) if r is not None]
                if len(rows) == n:
                    return None
                scores[rows] = -np.inf
            best = int(np.argmax(scores))
            score = float(scores[best])
            if score < threshold - SCORE_TOLERANCE:
                return None
            return self._ids[best], min(score, 1.0)

    # --- introspection ----------------------------------------------------------

    def keep_only(self, check_ids: Iterable[str]) -> int:
        """Drop every stored id not in ``check_ids``; return how many were dropped."""
        wanted = set(check_ids)
        with self._lock:
            stale = [check_id for check_id in self._ids if check_id not in wanted]
        return self.remove(stale)

    def __len__(self) -> int:
        with self._lock:
            return len(self._ids)

    def __contains__(self, check_id: object) -> bool:
        with self._lock:
            return check_id in self._row

    @property
    def capacity(self) -> int:
        """Rows allocated; grows by doubling."""
        with self._lock:
            return int(self._matrix.shape[0])

    # --- internals --------------------------------------------------------------

    def _grow(self) -> None:
        """Double the allocated rows (caller holds the lock)."""
        n = len(self._ids)
        grown = np.zeros((max(INITIAL_CAPACITY, 2 * self._matrix.shape[0]), self.dim), np.float32)
        grown[:n] = self._matrix[:n]
        self._matrix = grown

    def _as_vector(self, vector: np.ndarray) -> np.ndarray:
        """``vector`` as a finite float32 array of shape ``(dim,)``, or ``ValueError``.

        A ``(1, dim)`` row (what an encoder returns for one text) is accepted too.
        """
        array = np.asarray(vector, dtype=np.float32)
        if array.ndim == 2 and array.shape[0] == 1:
            array = array[0]
        if array.shape != (self.dim,):
            raise ValueError(
                f"expected a vector of dimension {self.dim}, got shape {np.shape(vector)}"
            )
        if not np.isfinite(array).all():
            raise ValueError("vector contains NaN or infinite values")
        return array


def _normalise_rows(array: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero); ``ValueError`` on NaN or inf.

    Norms are computed in float64, the scaling is done in float32.
    """
    if not np.isfinite(array).all():
        raise ValueError("vectors contain NaN or infinite values")
    norms = np.sqrt(np.einsum("ij,ij->i", array, array, dtype=np.float64))
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > TINY)
    result: np.ndarray = array * scale.astype(np.float32)[:, None]
    return result


# --- text helpers ------------------------------------------------------------------------

#: ``Fwd:``, ``FW:``, ``Forwarded from Channel:`` / ``Forwarded message from X`` at the start.
_FORWARD_HEADER = re.compile(
    r"^\s*(?:(?:fwd?|fw)\s*:|forwarded(?:\s+message)?\s+from\b[^\n:]*(?::|\n|$))\s*",
    re.IGNORECASE,
)
_HASHTAG_LINE = re.compile(r"^\s*(?:#\w+[\s,.!]*)+$", re.MULTILINE)
_TRAILING_HASHTAGS = re.compile(r"(?:\s+#\w+[,.!]*)+\s*$")
_HASHTAG_MARK = re.compile(r"(?<!\w)#(?=\w)")
_DROP_CATEGORIES = frozenset({"So", "Cf", "Co", "Cs"})


def _decoration(char: str) -> bool:
    """Emoji and other pictographs, zero-width joiners, variation selectors, skin tones."""
    code = ord(char)
    return (
        unicodedata.category(char) in _DROP_CATEGORIES
        or 0xFE00 <= code <= 0xFE0F
        or 0x1F3FB <= code <= 0x1F3FF
        or code == 0x20E3
    )


def canonical_text(text: str) -> str:
    """The text to encode for near-repeat search: ``text`` without forward decorations.

    NFKC-normalises, removes leading forward headers (``Fwd:``, ``FW:``,
    ``Forwarded from X:``, repeated), lines made only of hashtags and hashtags
    that end the text, the ``#`` of other hashtags (the word stays), emoji and
    other pictographs; then collapses whitespace and case-folds. Words,
    numbers and punctuation are otherwise kept, so two different claims stay
    different. Use it on both sides: for the stored vectors and for the query.
    """
    text = unicodedata.normalize("NFKC", text)
    text = text.translate({ord(c): " " for c in set(text) if _decoration(c)})
    previous = None
    while previous != text:
        previous = text
        text = _FORWARD_HEADER.sub("", text, count=1)
    text = _HASHTAG_LINE.sub("", text)
    text = _TRAILING_HASHTAGS.sub("", text)
    text = _HASHTAG_MARK.sub("", text)
    return " ".join(text.split()).casefold()


#: Words added or cut at either end of a post that count as a forward, not an edit.
EDGE_RUN = 3
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_NEGATIONS = frozenset(
    {"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "nowhere", "without"}
)


def _particular(word: str) -> bool:
    """A word whose change changes the claim: a negation or anything with a digit."""
    return word in _NEGATIONS or word.endswith(("n't", "n’t")) or any(c.isdigit() for c in word)


#: Words aligned at each end of two long texts; between the ends only the particular
#: words are compared (in order), so the comparison's cost is bounded: an alignment of
#: two 8,000-word texts (the 50,000-character cap) could take seconds.
ALIGNED_WORDS = 1500


def same_particulars(stored: str, new: str) -> bool:
    """Whether ``new`` can be a forward of ``stored``: no negation or number edited in between.

    The two texts' words are aligned (``difflib``). A run of at least
    ``EDGE_RUN`` words added or removed at the very start or the very end (a
    forward header, a "please share" line, a cut tail, a dropped first line)
    is allowed; any other inserted, deleted or replaced word that is a
    negation (``not``, ``never``, ``n't`` …) or contains a digit means a
    different claim. Cosine similarity does not see such edits: "X is not Y"
    scores about 0.98 against "X is Y". Call it on the best match before
    answering from it; a ``False`` means "check this post".

    Texts longer than twice :data:`ALIGNED_WORDS` are aligned on their first and
    last :data:`ALIGNED_WORDS` words only, and their middles must hold the same
    particular words in the same order: linear, and never wrong the costly way (an
    edit it cannot place reads as an edit, and the post is checked again).
    """
    a = _WORD.findall(canonical_text(stored))
    b = _WORD.findall(canonical_text(new))
    n = ALIGNED_WORDS
    if max(len(a), len(b)) <= 2 * n:
        return _aligned(a, b)
    middle = [w for w in a[n:-n] if _particular(w)] == [w for w in b[n:-n] if _particular(w)]
    return (
        middle and _aligned(a[:n], b[:n], at_end=False) and _aligned(a[-n:], b[-n:], at_start=False)
    )


def _aligned(a: list[str], b: list[str], *, at_start: bool = True, at_end: bool = True) -> bool:
    """Whether no edit between the word lists ``a`` and ``b`` touches a particular word,
    a run of ``EDGE_RUN`` words or more cut or added at a real end of the texts apart
    (``at_start``, ``at_end``: whether the lists begin and end where the texts do)."""
    blocks = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    last = len(blocks) - 1
    for k, (tag, i1, i2, j1, j2) in enumerate(blocks):
        if tag == "equal":
            continue
        words = (*a[i1:i2], *b[j1:j2])
        # A cut or added run of words at either end is a forward, not an edit; a lone
        # word there ("... than we did" -> "... than we did not") is an edit.
        edge = (k == 0 and at_start) or (k == last and at_end)
        cut = edge and tag in ("insert", "delete") and len(words) >= EDGE_RUN
        if not cut and any(_particular(w) for w in words):
            return False
    return True
