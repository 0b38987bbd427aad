"""Transformers token-classification NER: the paper's ``dslim/bert-base-NER``.

The model is named by hub id or local path. Per-token (word-piece) labels and
softmax scores come from the ``token-classification`` pipeline without
aggregation, so eq. 2's averaging happens in our own code, the same way for
every backend. Long posts are fed sentence-aligned chunks that fit the model's
512-piece window; offsets are mapped back onto the whole text.
"""

from __future__ import annotations

import threading
from typing import Any

from ...errors import ModelUnavailableError
from .base import COARSE_LABELS, NERBackend, NEROutput, TaggedToken
from .sentences import sentence_spans

__all__ = ["CHUNK_CHARS", "TransformersNER", "sentence_chunks"]

# Characters per chunk: well under 512 word pieces for English prose.
CHUNK_CHARS = 1200


class TransformersNER(NERBackend):
    """A BIO-tagging token classifier (CoNLL labels ``B-PER``, ``I-ORG``, ...).

    Args:
        model: hub name (``dslim/bert-base-NER``) or a local directory.
        device: ``-1`` for CPU, or a CUDA index.
    """

    name = "transformers"

    def __init__(self, model: str = "dslim/bert-base-NER", device: int = -1) -> None:
        self.model = model
        self.device = device
        self._pipe: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        self._pipeline()

    def _pipeline(self) -> Any:
        with self._lock:
            if self._pipe is None:
                try:
                    from transformers import pipeline
                except ImportError as exc:
                    raise ModelUnavailableError(
                        "the transformers NER backend needs: pip install 'zofia-factcheck[hf-ner]'"
                    ) from exc
                try:
                    self._pipe = pipeline(
                        "token-classification",
                        model=self.model,
                        aggregation_strategy="none",
                        device=self.device,
                    )
                except OSError as exc:
                    raise ModelUnavailableError(
                        f"cannot load NER model {self.model!r} (hub name or local path): {exc}"
                    ) from exc
            return self._pipe

    def recognize(self, text: str) -> NEROutput:
        pipe = self._pipeline()
        sentences = sentence_spans(text)
        chunks = sentence_chunks(sentences)
        tokens: list[TaggedToken] = []
        if chunks:
            with self._lock:
                outputs = pipe([text[s:e] for s, e in chunks])
            if chunks and isinstance(outputs, list) and outputs and isinstance(outputs[0], dict):
                outputs = [outputs]  # one chunk: the pipeline unwraps the batch
            index_base = 0
            for (offset, _), rows in zip(chunks, outputs, strict=True):
                top = index_base
                for row in rows:
                    tag = str(row["entity"])
                    prefix, _, label = tag.partition("-")
                    if label not in COARSE_LABELS or prefix not in ("B", "I"):
                        continue
                    index = index_base + int(row["index"])
                    top = max(top, index)
                    tokens.append(
                        TaggedToken(
                            index=index,
                            start=offset + int(row["start"]),
                            end=offset + int(row["end"]),
                            label=label,
                            begins=prefix == "B",
                            score=float(row["score"]),
                        )
                    )
                # Leave a gap so entities never run across a chunk boundary.
                index_base = top + 1000
        return NEROutput(tokens=tokens, sentences=sentences)


def sentence_chunks(sentences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Group consecutive sentences (``(start, end)`` character spans) into spans of at
    most :data:`CHUNK_CHARS` characters, the pieces the model reads one at a time; a
    longer sentence is cut."""
    chunks: list[tuple[int, int]] = []
    for start, end in sentences:
        while end - start > CHUNK_CHARS:  # a run-on "sentence": cut it
            chunks.append((start, start + CHUNK_CHARS))
            start += CHUNK_CHARS
        if chunks and end - chunks[-1][0] <= CHUNK_CHARS:
            chunks[-1] = (chunks[-1][0], end)
        else:
            chunks.append((start, end))
    return chunks
