"""The settings sections the storage layer owns: ``[storage]`` and ``[service]``."""

from __future__ import annotations

from pydantic import Field, model_validator

from zofia_engine.config import SettingsSection

__all__ = ["MIN_SECRET_CHARS", "ServiceSettings", "StorageSettings"]

MIN_SECRET_CHARS = 16


class StorageSettings(SettingsSection):
    """The SQLite store of checks and reports.

    ``path`` empty means ``zofia.db`` in the user data directory. ``secret`` keys
    the HMAC that replaces platform user ids; empty means one is generated on
    first use into ``<db>.secret`` (mode 0600) next to the database.
    """

    path: str = ""
    secret: str = ""
    retention_days: int = Field(30, ge=1)

    @model_validator(mode="after")
    def _secret_is_long_enough(self) -> StorageSettings:
        if self.secret and len(self.secret) < MIN_SECRET_CHARS:
            raise ValueError(
                f"storage.secret must be at least {MIN_SECRET_CHARS} characters "
                "(or empty, to have one generated)"
            )
        return self


class ServiceSettings(SettingsSection):
    """The check service: repeats, concurrency, rate limits and quotas."""

    repeat_window_hours: float = Field(72.0, ge=0)
    near_threshold: float = Field(0.95, gt=0, le=1)
    max_concurrent_checks: int = Field(2, ge=1)
    # Checks waiting for or holding an engine slot; past it, new checks are refused
    # ("busy, try again in N min") while repeats are still answered from the store.
    max_pending_checks: int = Field(20, ge=1)
    # LLM tokens (prompt + completion) all checks may spend per UTC day; 0: no budget.
    daily_token_budget: int = Field(2_000_000, ge=0)
    user_per_minute: int = Field(3, ge=1)
    chat_per_minute: int = Field(10, ge=1)
    user_daily: int = Field(50, ge=1)
    chat_daily: int = Field(300, ge=1)
