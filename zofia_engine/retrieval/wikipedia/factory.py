"""Pick the Wikipedia backend that the settings name."""

from __future__ import annotations

from ...config import WikipediaSettings
from ...errors import ConfigError
from .base import WikipediaBackend
from .mediawiki import MediaWikiBackend
from .offline import OfflineWikipedia

__all__ = ["build_wikipedia_backend"]


def build_wikipedia_backend(wiki: WikipediaSettings) -> WikipediaBackend | None:
    """Build the backend named by ``wiki.backend``.

    Args:
        wiki: the ``[wikipedia]`` settings.

    Returns:
        The backend, or ``None`` when ``backend = "none"`` (Wikipedia retrieval off).

    Raises:
        ModelUnavailableError: ``offline`` without its data package installed.
        ConfigError: ``offline`` with a ``path`` that is not a file, or a bad setting.
    """
    if wiki.backend == "none":
        return None
    if wiki.backend == "mediawiki":
        return MediaWikiBackend.from_settings(wiki)
    if wiki.backend == "offline":
        return OfflineWikipedia.from_settings(wiki)
    raise ConfigError(f"wikipedia.backend: unknown backend {wiki.backend!r}")  # pragma: no cover
