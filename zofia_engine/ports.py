"""The engine as the layers around it see it: small ports, so that they can be given
a stand-in (an in-process fake in tests, as httpx tests use ``MockTransport``).

``Engine`` is a :class:`Checker`; ``SentenceTransformerEncoder`` is a
:class:`TextEncoder`. Nothing here imports a model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

import numpy as np

from .post import Post, ProgressHook
from .report import Report

__all__ = ["CheckFunction", "Checker", "TextEncoder"]


class Checker(Protocol):
    """Fact-checks a post: the post and a progress hook in, the report out."""

    async def check(self, post: Post, *, on_progress: ProgressHook | None = None) -> Report:
        """Check ``post``, reporting progress to ``on_progress``.

        Raises:
            InvalidPostError: the post has nothing to check.
        """
        ...

    async def read_post(self, post: Post) -> Post:
        """``post`` with its pictures read: decoded, cleaned, their text in its text
        (the post as it is without pictures).

        Raises:
            InvalidPostError: a picture is refused, or there is no text anywhere.
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
