"""The base of every settings section: unknown keys refused, values frozen once checked."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["SettingsSection"]


class SettingsSection(BaseModel):
    """A section of settings: unknown keys refused, values frozen once checked."""

    # Numbers given for string settings (a numeric API key from the environment) stay strings.
    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)
