"""Build the configured published fact-check backends from settings."""

from __future__ import annotations

from ...config import FactCheckSettings
from .base import FactCheckBackend
from .google import GoogleFactCheck

__all__ = ["build_factcheck_backends"]


def build_factcheck_backends(settings: FactCheckSettings) -> list[FactCheckBackend]:
    """One backend per name in ``settings.backends``, in that order, not yet connected
    (close each with ``aclose()``); a name listed twice gives one. An empty list (the
    default) gives none: the offline configuration.

    Raises:
        ConfigError: a backend's settings are incomplete.
    """
    makers = {"google": GoogleFactCheck.from_settings}
    return [makers[name](settings) for name in dict.fromkeys(settings.backends)]
