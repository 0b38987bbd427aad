"""The Wikipedia seam (paper §3.4): candidate senses for a keyword."""

from __future__ import annotations

import abc

from ...records.stage1 import WikiCandidate
from .gazetteer import TitleMatch

__all__ = ["WikipediaBackend"]


class WikipediaBackend(abc.ABC):
    """A source of Wikipedia articles. Failures raise :class:`SourceError` subclasses."""

    name: str
    local: bool = False  # answers from this machine (no quota, no network)

    @abc.abstractmethod
    async def candidates(self, keyword: str, limit: int) -> list[WikiCandidate]:
        """Return up to ``limit`` candidate senses of ``keyword``, best guesses first.

        Each candidate carries its short description and its intro extract
        (plain text); disambiguation pages are left out.
        """

    async def title_matches(
        self, text: str, limit: int, skip: frozenset[str] = frozenset()
    ) -> list[TitleMatch]:
        """Articles whose title ``text`` (a post) writes out in its own words.

        Args:
            text: the post.
            limit: the most phrases to return.
            skip: normalised phrases (:func:`~.titles.normalize_title`) not to look
                up: those already looked up as keywords.

        Returns:
            Up to ``limit`` phrases of the post, each with the articles it names,
            likeliest names first. A backend that cannot match titles finds none.
        """
        return []

    def description(self, name: str) -> str:
        """The short description of the article titled ``name`` ("Capital city of
        Victoria, Australia"), or ``""``: what the claim reader knows of a name besides
        its letters. Blocking; a backend without local data knows nothing."""
        return ""

    async def count_articles(self) -> int | None:
        """How many articles this source can return (``None`` when it cannot say)."""
        return None

    def load(self) -> None:  # noqa: B027 - optional hook
        """Read local data now rather than on the first lookup (blocking; call in a thread)."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
