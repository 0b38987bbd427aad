"""Build the configured open-web backends from settings."""

from __future__ import annotations

from ...config import WebSettings
from ...errors import ConfigError
from .base import SearchBackend
from .brave import BraveSearch
from .corpus import CorpusSearch
from .searxng import SearxngSearch

__all__ = ["build_search_backends"]


def build_search_backends(web: WebSettings) -> list[SearchBackend]:
    """One backend per entry of ``web.backends``, in that order.

    A name listed twice gives one backend. An empty list gives no backends (the
    offline configuration).

    Args:
        web: the open-web settings.

    Returns:
        The backends, not yet connected; close each with ``aclose()``.

    Raises:
        ConfigError: a backend's settings are incomplete, or its name is unknown.
    """
    backends: list[SearchBackend] = []
    seen: set[str] = set()
    for name in web.backends:
        if name in seen:
            continue
        seen.add(name)
        if name == "brave":
            backends.append(BraveSearch.from_settings(web))
        elif name == "searxng":
            backends.append(SearxngSearch.from_settings(web))
        elif name == "corpus":
            backends.append(CorpusSearch.from_settings(web))
        else:  # pragma: no cover - the settings' Literal type rules this out
            raise ConfigError(f"web.backends: unknown backend {name!r}")
    return backends
