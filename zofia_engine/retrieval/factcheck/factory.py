"""Build the configured published fact-check backends from settings."""

from __future__ import annotations

from ...config import FactCheckSettings
from ...errors import ConfigError
from .base import FactCheckBackend
from .google import GoogleFactCheck

__all__ = ["build_factcheck_backends"]


def build_factcheck_backends(settings: FactCheckSettings) -> list[FactCheckBackend]:
    """One backend per entry of ``settings.backends``, in that order.

    A name listed twice gives one backend. An empty list (the default) gives no
    backends: the offline configuration.

    Args:
        settings: the fact-check settings.

    Returns:
        The backends, not yet connected; close each with ``aclose()``.

    Raises:
        ConfigError: a backend's settings are incomplete, or its name is unknown.
    """
    backends: list[FactCheckBackend] = []
    seen: set[str] = set()
    for name in settings.backends:
        if name in seen:
            continue
        seen.add(name)
        if name == "google":
            backends.append(GoogleFactCheck.from_settings(settings))
        else:  # pragma: no cover - the settings' Literal type rules this out
            raise ConfigError(f"factcheck.backends: unknown backend {name!r}")
    return backends
