"""The NER seam: a backend tags tokens; the shared code turns tags into entities.

Both backends report what the paper's eq. 1 needs, per token: its label and
the model's confidence in that label. Sentence boundaries come along, since
salience (eq. 3) works on sentences.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

__all__ = ["COARSE_LABELS", "NERBackend", "NEROutput", "TaggedToken"]

# The CoNLL-2003 label set of the paper's dslim/bert-base-NER.
COARSE_LABELS = ("PER", "ORG", "LOC", "MISC")


@dataclass(frozen=True)
class TaggedToken:
    """One token the model put inside an entity.

    Attributes:
        index: position in the backend's token sequence (consecutive tokens differ by 1).
        start, end: character offsets in the text.
        label: coarse label, one of :data:`COARSE_LABELS`.
        begins: the model opened a new entity here (a ``B-`` tag).
        score: the model's probability for this token's label, in [0, 1].
    """

    index: int
    start: int
    end: int
    label: str
    begins: bool
    score: float


@dataclass(frozen=True)
class NEROutput:
    """Entity-tagged tokens and sentence spans ``(start, end)`` covering the text."""

    tokens: list[TaggedToken]
    sentences: list[tuple[int, int]]


class NERBackend(abc.ABC):
    """A named-entity recogniser.

    ``recognize`` is synchronous: it is CPU-bound model work, which the pipeline
    runs in a worker thread so the event loop stays free.
    """

    name: str

    @abc.abstractmethod
    def recognize(self, text: str) -> NEROutput:
        """Tag the entity tokens of ``text`` and split it into sentences."""

    def load(self) -> None:  # noqa: B027 - optional hook
        """Load the model now rather than on the first call."""
