"""Not a bench script: helpers of ``bench/near_threshold.py`` (``bench/lib/`` holds
such). The packaged encoder, with strings cut where the model cuts them, and the cosines
of one regime's texts, variants and edits under one text preparation."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from zofia_engine.encoder import SentenceTransformerEncoder


class Encoder:
    """The packaged encoder; strings cut where the model cuts them, cached by token ids."""

    def __init__(self) -> None:
        self.encoder = SentenceTransformerEncoder()
        model = self.encoder.load()
        self.tokenizer = model.tokenizer
        self.limit = (model.max_seq_length or 512) - 2  # [CLS] and [SEP]
        self.cache: dict[tuple[int, ...], np.ndarray] = {}
        self.encoded = 0

    def tokens(self, texts: Sequence[str]) -> list[tuple[int, ...]]:
        """The token ids the model reads of each text."""
        ids = self.tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"]
        return [tuple(x[: self.limit]) for x in ids]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One unit row per text; texts the model reads alike are encoded once."""
        batch = self.tokenizer(
            list(texts), add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        keys = [tuple(ids[: self.limit]) for ids in batch["input_ids"]]
        todo: dict[tuple[int, ...], str] = {}
        for key, text, offsets in zip(keys, texts, batch["offset_mapping"], strict=True):
            if key not in self.cache and key not in todo:
                # Cut after the last token the model reads: the same input, less work.
                cut = len(offsets) > self.limit
                todo[key] = text[: offsets[self.limit - 1][1]] if cut else text
        if todo:
            rows = self.encoder.encode(list(todo.values()))
            self.cache.update(zip(todo, rows, strict=True))
            self.encoded += len(todo)
        if not keys:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self.cache[key] for key in keys])


class Scores:
    """Cosines for one regime under one text preparation (raw or canonical)."""

    def __init__(
        self,
        enc: Encoder,
        texts: list[str],
        pool: list[str],
        pairs: list[tuple[int, str, str]],
        edited: list[tuple[int, str, str]],
        prepare: Callable[[str], str],
    ) -> None:
        originals = enc.encode([prepare(t) for t in texts])
        others = originals if pool is texts else enc.encode([prepare(t) for t in pool])
        variants = enc.encode([prepare(v) for _, _, v in pairs + edited])
        own = np.array([i for i, _, _ in pairs], dtype=int)
        vv = variants[: len(pairs)]
        self.positive = np.einsum("ij,ij->i", vv, originals[own])
        # Hardest negative: each text vs its most similar different text in the pool.
        sims = originals @ others.T
        for i, text in enumerate(texts):
            sims[i, [j for j, other in enumerate(pool) if other == text]] = -np.inf
        self.neighbour = sims.argmax(axis=1)
        self.negative = sims[np.arange(len(texts)), self.neighbour]
        # A variant's best match among the OTHER originals (it should be its own).
        other = vv @ originals.T
        other[np.arange(len(pairs)), own] = -np.inf
        self.variant_negative = other.max(axis=1)
        edit_own = np.array([i for i, _, _ in edited], dtype=int)
        self.edited = np.einsum("ij,ij->i", variants[len(pairs) :], originals[edit_own])
