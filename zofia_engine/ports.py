"""The engine as the layers around it see it: small ports, so that they can be given
a stand-in (an in-process fake in tests, as httpx tests use ``MockTransport``).

``Engine`` is a :class:`Checker` and an :class:`Answerer`;
``SentenceTransformerEncoder`` is a :class:`TextEncoder`. Nothing here imports a model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .post import Post, ProgressHook, ReadPost
from .report import Report

__all__ = [
    "NO_ANSWER",
    "Answerer",
    "CheckFunction",
    "Checker",
    "FollowUpAnswer",
    "TextEncoder",
]

#: what a follow-up question gets when the report does not answer it
NO_ANSWER = "The report does not answer that question."


@dataclass(frozen=True)
class FollowUpAnswer:
    """The answer to a question about a finished check: a few sentences, and the ids of
    the report's evidence they rest on (``web-3``, ``wiki-1``; each one in the report),
    and the tokens it cost.
    ``answered`` is false when the report does not answer the question: the text is then
    :data:`NO_ANSWER` and nothing is cited."""

    text: str
    cites: tuple[str, ...] = ()
    answered: bool = True
    tokens: int = 0  # what the call cost (prompt and completion), for the day's budget

    @classmethod
    def unanswered(cls, tokens: int = 0) -> FollowUpAnswer:
        return cls(NO_ANSWER, (), answered=False, tokens=tokens)


class Checker(Protocol):
    """Fact-checks a post, in two steps: :meth:`read` it once (its images read, its text
    cleaned, an empty post refused), then :meth:`check` what was read. The service reads
    first because the text in a post's images is part of what a repeat is keyed on."""

    async def read(self, post: Post) -> ReadPost:
        """``post`` read: its voice note heard and its images decoded, cleaned and
        read (the words heard and the text read join its text), its text cleaned.

        Raises:
            InvalidPostError: the voice note or an image is refused, or there is no
                text anywhere; the message is one sentence for the user.
        """
        ...

    async def check(self, read: ReadPost, *, on_progress: ProgressHook | None = None) -> Report:
        """Check the post ``read``, reporting progress to ``on_progress``."""
        ...


class Answerer(Protocol):
    """Answers a reader's question on a finished check, from its report alone."""

    async def follow_up(
        self, report: Report, question: str, *, language: str = ""
    ) -> FollowUpAnswer:
        """Answer a reader's ``question`` about ``report`` from the report alone (its
        claims, evidence and debate), citing its evidence, in ``language`` (``""``:
        English); :meth:`FollowUpAnswer.unanswered` when the report does not answer it.

        Raises:
            StepFailed: the model's call failed, or its reply could not be read.
        """
        ...


#: A checker's ``check`` alone (an ablation bound, the only-LLM baseline).
CheckFunction = Callable[[Post], Awaitable[Report]]


class TextEncoder(Protocol):
    """Anything that turns strings into unit-length vectors of a fixed dimension."""

    @property
    def dimension(self) -> int:
        """The length of every vector (loads the model if it must)."""
        ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised row per input string, in input order (blocking)."""
        ...
