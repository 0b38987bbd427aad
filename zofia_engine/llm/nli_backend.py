"""An optional claim-stance verifier: a sequence classifier read by name through transformers.

Instead of asking the LLM whether an evidence sentence supports or refutes a claim, a
dedicated model can score each (premise = evidence sentence, hypothesis = claim) pair:
an NLI cross-encoder (``MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli``, labels
entailment / neutral / contradiction) or a MiniCheck-style binary checker (supported /
unsupported, or ``LABEL_0`` / ``LABEL_1`` with a ``labels`` mapping). The model's own
label names are mapped onto three stances; a binary checker never refutes.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from ..errors import ConfigError, ModelUnavailableError

__all__ = ["NLIStanceModel", "Stance", "StanceScores", "decide", "map_labels"]

Stance = Literal["supports", "refutes", "neither"]
STANCES: tuple[Stance, ...] = get_args(Stance)
MAX_SENTENCES = 3

# Checked in this order: "unsupported" and "not_entailment" are not support.
_KEYWORDS: tuple[tuple[Stance, tuple[str, ...]], ...] = (
    ("neither", ("neutral", "unsupport", "not", "non")),
    ("refutes", ("contradict", "refute")),
    ("supports", ("entail", "support")),
)


@dataclass(frozen=True)
class StanceScores:
    """One pair's probabilities, summing to 1 (a binary checker: ``refutes`` is 0)."""

    supports: float
    refutes: float
    neither: float


def _stance_of(label: str, labels: dict[str, Stance]) -> Stance | None:
    lowered = label.lower()
    if label in labels:
        return labels[label]
    folded = {k.lower(): v for k, v in labels.items()}
    if lowered in folded:
        return folded[lowered]
    for stance, words in _KEYWORDS:
        if any(word in lowered for word in words):
            return stance
    return None


def map_labels(
    id2label: dict[int, str], labels: dict[str, Stance], model: str = "the model"
) -> dict[int, Stance]:
    """Each output index's stance; ``ModelUnavailableError`` if the names do not fit."""
    mapped = {int(i): _stance_of(str(name), labels) for i, name in id2label.items()}
    names = ", ".join(repr(str(id2label[i])) for i in sorted(id2label))
    found = {s for s in mapped.values() if s is not None}
    if None in mapped.values() or "supports" not in found or len(found) < 2:
        raise ModelUnavailableError(
            f"cannot tell which of {model}'s labels ({names}) mean supports, refutes or "
            "neither; map each one in the stance.labels setting "
            '(e.g. labels = {LABEL_0 = "neither", LABEL_1 = "supports"})'
        )
    return {i: s for i, s in mapped.items() if s is not None}


class NLIStanceModel:
    """Scores (evidence sentence, claim) pairs with a sequence-classification model.

    Args:
        model: hub name or local directory.
        device: torch device.
        batch_size: pairs per forward pass (each batch padded to its longest pair).
        max_length: word pieces per pair; longer pairs are truncated.
        labels: the model's label names mapped to stances, overriding the guesses.
    """

    def __init__(
        self,
        model: str,
        *,
        device: str = "cpu",
        batch_size: int = 16,
        max_length: int = 256,
        labels: dict[str, str] | None = None,
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"stance batch_size must be at least 1, not {batch_size}")
        bad = {k: v for k, v in (labels or {}).items() if v not in STANCES}
        if bad:
            raise ConfigError(
                f"stance.labels maps {bad} to something other than supports, refutes or neither"
            )
        self.model = model
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self.labels: dict[str, Stance] = {k: cast(Stance, v) for k, v in (labels or {}).items()}
        self._tokenizer: Any = None
        self._model: Any = None
        self._stances: dict[int, Stance] = {}
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"nli:{self.model}"

    def load(self) -> None:
        """Read the tokenizer and model (blocking); repeated calls do nothing."""
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> None:
        if self._model is not None:
            return
        try:
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as exc:
            raise ModelUnavailableError(
                "the NLI stance backend needs: pip install 'zofia-factcheck[hf-ner]'"
            ) from exc
        offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
        try:
            tokenizer = AutoTokenizer.from_pretrained(self.model, local_files_only=offline)
            model = AutoModelForSequenceClassification.from_pretrained(
                self.model, local_files_only=offline
            )
        except (OSError, ValueError) as exc:
            raise ModelUnavailableError(
                f"cannot load stance model {self.model!r} (hub name or local path): {exc}"
            ) from exc
        stances = map_labels(dict(model.config.id2label), self.labels, repr(self.model))
        try:
            model.to(self.device)
        except (RuntimeError, AssertionError) as exc:
            raise ModelUnavailableError(
                f"cannot put stance model {self.model!r} on device {self.device!r}: {exc}"
            ) from exc
        model.eval()
        self._tokenizer, self._model, self._stances = tokenizer, model, stances

    async def score(self, pairs: Sequence[tuple[str, str]]) -> list[StanceScores]:
        """Each (premise = evidence sentence, hypothesis = claim) pair's stance probabilities."""
        if not pairs:
            return []
        return await asyncio.to_thread(self.score_sync, list(pairs))

    def score_sync(self, pairs: Sequence[tuple[str, str]]) -> list[StanceScores]:
        """``score`` in the calling thread (blocking)."""
        import torch

        out: list[StanceScores] = []
        with self._lock:
            self._load_locked()
            for start in range(0, len(pairs), self.batch_size):
                batch = pairs[start : start + self.batch_size]
                encoded = self._tokenizer(
                    [premise for premise, _ in batch],
                    [hypothesis for _, hypothesis in batch],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                with torch.inference_mode():
                    logits = self._model(**encoded).logits
                probs = logits.float().softmax(dim=-1).cpu().tolist()
                out.extend(self._fold(row) for row in probs)
        return out

    def _fold(self, row: list[float]) -> StanceScores:
        total = dict.fromkeys(STANCES, 0.0)
        for index, p in enumerate(row):
            total[self._stances[index]] += p
        return StanceScores(total["supports"], total["refutes"], total["neither"])


def decide(scores: Sequence[StanceScores], min_probability: float) -> tuple[Stance, list[int]]:
    """One claim's stance over its sentences, and the indices of those that carry it.

    Refutes wins when a sentence's refutes probability reaches ``min_probability`` and
    is its highest; then supports likewise; else ``("neither", [])``. The indices are
    ordered by that probability, highest first, at most three.
    """
    order: tuple[Stance, ...] = ("refutes", "supports")
    for stance in order:
        carrying = [
            (getattr(s, stance), i)
            for i, s in enumerate(scores)
            if getattr(s, stance) >= min_probability
            and getattr(s, stance) >= max(s.supports, s.refutes, s.neither)
        ]
        if carrying:
            carrying.sort(key=lambda pair: (-pair[0], pair[1]))
            return stance, [i for _, i in carrying[:MAX_SENTENCES]]
    return "neither", []
