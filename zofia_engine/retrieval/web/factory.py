"""Build the configured open-web backends from settings."""

from __future__ import annotations

from collections.abc import Callable

from ...config import WebSettings
from .base import SearchBackend
from .brave import BraveSearch
from .corpus import CorpusSearch
from .searxng import SearxngSearch

__all__ = ["build_search_backends"]


def build_search_backends(web: WebSettings) -> list[SearchBackend]:
    """One backend per name in ``web.backends``, in that order, not yet connected (close
    each with ``aclose()``); a name listed twice gives one. An empty list gives none:
    the offline configuration.

    Raises:
        ConfigError: a backend's settings are incomplete.
    """
    makers: dict[str, Callable[[WebSettings], SearchBackend]] = {
        "brave": BraveSearch.from_settings,
        "searxng": SearxngSearch.from_settings,
        "corpus": CorpusSearch.from_settings,
    }
    return [makers[name](web) for name in dict.fromkeys(web.backends)]
