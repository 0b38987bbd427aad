"""A deployment's settings: the engine's sections and those of the layers around it,
composed into one model and read by one loader, for the CLI and the bots alike.

The engine gets its own sections only (``Engine(settings.engine)``), never a platform's
token or the store's secret. In the file and the environment every section is written
at the top level as before (``[llm]``, ``ZOFIA__LLM__…``): the engine's are gathered
into :attr:`Settings.engine` when the settings are checked."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import model_validator

from bots.api.settings import ApiSettings
from bots.discord.settings import DiscordSettings
from bots.service.settings import QueueSettings, ServiceSettings
from bots.telegram.settings import TelegramSettings
from bots.web.settings import SiteSettings
from storage.settings import StorageSettings
from zofia_engine.config import EngineSettings, load_config
from zofia_engine.errors import ConfigError
from zofia_engine.settings_base import SettingsSection

__all__ = ["CONFIG_ENV", "Settings", "find_config", "load_settings"]

CONFIG_ENV = "ZOFIA_CONFIG"


class Settings(SettingsSection):
    """Every section. ``Settings()`` is the offline default."""

    engine: EngineSettings = EngineSettings()
    storage: StorageSettings = StorageSettings()
    service: ServiceSettings = ServiceSettings()
    queue: QueueSettings = QueueSettings()
    telegram: TelegramSettings = TelegramSettings()
    discord: DiscordSettings = DiscordSettings()
    site: SiteSettings = SiteSettings()
    api: ApiSettings = ApiSettings()

    @model_validator(mode="before")
    @classmethod
    def _engine_sections(cls, data: Any) -> Any:
        """The engine's sections, written at the top level, gathered into ``engine``."""
        if not isinstance(data, dict):
            return data
        own = {key: data[key] for key in EngineSettings.model_fields if key in data}
        if not own:
            return data
        rest = {key: value for key, value in data.items() if key not in own}
        engine = rest.get("engine", {})
        if isinstance(engine, EngineSettings):
            engine = engine.model_dump()
        return {**rest, "engine": {**engine, **own}}

    @property
    def queued(self) -> bool:
        """The deployment's mode, decided here once: with the store on PostgreSQL the
        checks go through the job queue to ``zofia worker`` processes (the queued
        mode); else the bot's own process runs them (the local mode)."""
        return self.storage.is_postgres


def find_config(config: Path | None, environ: Mapping[str, str] | None = None) -> Path | None:
    """The settings file: ``config``, else ``$ZOFIA_CONFIG``, else ``./zofia.toml`` if it
    exists, else none (the defaults)."""
    environ = os.environ if environ is None else environ
    if config is None and environ.get(CONFIG_ENV):
        config = Path(environ[CONFIG_ENV])
    if config is None and Path("zofia.toml").is_file():
        config = Path("zofia.toml")
    return config


def load_settings(config: Path | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """The checked settings from the file :func:`find_config` names and the environment.

    Raises:
        ConfigError: the file is unreadable, or a setting is wrong (the message names it).
    """
    try:
        return load_config(find_config(config, environ), environ, schema=Settings)
    except ConfigError as exc:  # a setting is named as it is written: "llm.model"
        raise ConfigError(str(exc).replace("\n  engine.", "\n  ")) from None
