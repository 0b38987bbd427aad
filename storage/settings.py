"""The settings section the store owns: ``[storage]``."""

from __future__ import annotations

from pydantic import Field, model_validator

from zofia_engine.config import SettingsSection

__all__ = ["MIN_SECRET_CHARS", "StorageSettings"]

MIN_SECRET_CHARS = 16


class StorageSettings(SettingsSection):
    """The store of checks and reports.

    ``url`` picks the engine: empty or ``sqlite:///FILE`` is SQLite (the embedded
    default; ``path`` names the file, empty meaning ``zofia.db`` in the user data
    directory); ``postgresql://…`` is a PostgreSQL shared by bots and workers, with
    the job queue in it. ``secret`` keys the HMAC that replaces platform user ids;
    on SQLite, empty means one is generated on first use into ``<db>.secret``
    (mode 0600) next to the file; PostgreSQL needs it set, the same in every
    process.
    """

    url: str = ""
    path: str = ""
    secret: str = ""
    retention_days: int = Field(30, ge=1)

    @property
    def is_postgres(self) -> bool:
        return self.url.startswith(("postgresql://", "postgres://"))

    @model_validator(mode="after")
    def _url_names_an_engine(self) -> StorageSettings:
        if self.url and not (self.is_postgres or self.url.startswith("sqlite:///")):
            raise ValueError(
                "storage.url must start with sqlite:/// or postgresql:// (or be empty)"
            )
        if self.is_postgres and not self.secret:
            raise ValueError(
                "storage.secret must be set with PostgreSQL (ZOFIA__STORAGE__SECRET): every"
                " bot and worker keys user ids with it, so all must share one"
            )
        return self

    @property
    def sqlite_path(self) -> str:
        """The SQLite file the settings name (``url`` over ``path``); empty: the default."""
        return self.url.removeprefix("sqlite:///") if self.url else self.path

    @model_validator(mode="after")
    def _secret_is_long_enough(self) -> StorageSettings:
        if self.secret and len(self.secret) < MIN_SECRET_CHARS:
            raise ValueError(
                f"storage.secret must be at least {MIN_SECRET_CHARS} characters "
                "(or empty, to have one generated)"
            )
        return self
