"""Settings: TOML on disk, secrets from the environment, checked at start.

Every setting has the paper's value as its default, so an empty file (or no
file) gives the offline ZoFia configuration. ``load_config`` raises
:class:`~zofia_engine.errors.ConfigError` naming the first wrong key.

Environment overrides: ``ZOFIA__SECTION__KEY=value`` sets ``[section] key``
(nest deeper with more ``__``), so secrets never have to be written in the
file. ``BRAVE_API_KEY``, ``GOOGLE_FACTCHECK_API_KEY``, ``GOOGLE_VISION_API_KEY`` and
``OPENAI_API_KEY`` are also read, as their providers' docs name them (:data:`ENV_ALIASES`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .audio_settings import AudioSettings
from .errors import ConfigError
from .image_settings import ImageSettings, ReverseImageSettings
from .settings_base import SettingsSection
from .stage1_settings import (
    BraveSettings,
    CorpusSettings,
    EncoderSettings,
    FactCheckSettings,
    GoogleFactCheckSettings,
    KeywordSettings,
    MediaWikiSettings,
    NERSettings,
    OfflineWikiSettings,
    RetrievalSettings,
    SearxngSettings,
    WebSettings,
    WikipediaSettings,
)
from .stage2_settings import (
    ROLES,
    AgentSettings,
    DebateSettings,
    EmbeddedSettings,
    EvidenceSettings,
    LLMSettings,
    OpenAISettings,
    Role,
    RoleSettings,
    StanceSettings,
    TreeSettings,
    TriageSettings,
)

__all__ = [
    "ROLES",
    "AgentSettings",
    "AudioSettings",
    "BraveSettings",
    "CorpusSettings",
    "DebateSettings",
    "EmbeddedSettings",
    "EncoderSettings",
    "EngineSettings",
    "EvidenceSettings",
    "FactCheckSettings",
    "GoogleFactCheckSettings",
    "ImageSettings",
    "KeywordSettings",
    "LLMSettings",
    "MediaWikiSettings",
    "NERSettings",
    "OfflineWikiSettings",
    "OpenAISettings",
    "RetrievalSettings",
    "ReverseImageSettings",
    "Role",
    "RoleSettings",
    "SearxngSettings",
    "SettingsSection",
    "StanceSettings",
    "TreeSettings",
    "TriageSettings",
    "WebSettings",
    "WikipediaSettings",
    "load_config",
]

ENV_PREFIX = "ZOFIA__"
ENV_ALIASES: dict[str, tuple[str, ...]] = {
    "BRAVE_API_KEY": ("web", "brave", "api_key"),
    "GOOGLE_FACTCHECK_API_KEY": ("factcheck", "google", "api_key"),
    "GOOGLE_VISION_API_KEY": ("images", "reverse", "api_key"),
    "OPENAI_API_KEY": ("llm", "openai", "api_key"),
}


class EngineSettings(SettingsSection):
    """The engine's settings. ``EngineSettings()`` is the offline default.

    The layers around the engine (storage, the service, the chat platforms) own their
    sections; ``bots.app.settings.Settings`` composes them all for a deployment.
    """

    ner: NERSettings = NERSettings()
    encoder: EncoderSettings = EncoderSettings()
    keywords: KeywordSettings = KeywordSettings()
    web: WebSettings = WebSettings()
    wikipedia: WikipediaSettings = WikipediaSettings()
    llm: LLMSettings = LLMSettings()
    agents: AgentSettings = AgentSettings()
    debate: DebateSettings = DebateSettings()
    triage: TriageSettings = TriageSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    factcheck: FactCheckSettings = FactCheckSettings()
    evidence: EvidenceSettings = EvidenceSettings()
    tree: TreeSettings = TreeSettings()
    images: ImageSettings = ImageSettings()
    audio: AudioSettings = AudioSettings()
    stance: StanceSettings = StanceSettings()


S = TypeVar("S", bound=BaseModel)


def _set_path(data: dict[str, Any], path: tuple[str, ...], value: str, parse: bool = True) -> None:
    node = data
    for part in path[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"{'.'.join(path)}: environment override hits a non-table value")
        node = child
    node[path[-1]] = _parse_env_value(value) if parse else value


def _parse_env_value(value: str) -> Any:
    """Read an environment value as a TOML value when it parses as one, else as a string."""
    try:
        return tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return value


def _apply_env(data: dict[str, Any], environ: Mapping[str, str]) -> None:
    for name, path in ENV_ALIASES.items():
        if environ.get(name):  # a vendor's own variable: always a plain string
            _set_path(data, path, environ[name], parse=False)
    for name, value in environ.items():
        if name.startswith(ENV_PREFIX):
            path = tuple(p.lower() for p in name[len(ENV_PREFIX) :].split("__") if p)
            if path:
                _set_path(data, path, value)


def _format_error(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        if err["type"] == "extra_forbidden":
            lines.append(f"{where}: unknown setting")
        else:
            lines.append(f"{where}: {err['msg']}")
    return "invalid configuration:\n  " + "\n  ".join(lines)


def load_config(
    path: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    schema: type[S] = EngineSettings,  # type: ignore[assignment]
) -> S:
    """Read settings from ``path`` (TOML) and the environment, and check them.

    Args:
        path: a TOML file; ``None`` means defaults plus the environment.
        environ: the environment to read overrides from (``os.environ`` if omitted).
        schema: the settings model to check them against: the engine's by default, or
            a deployment's that composes it with other sections.

    Returns:
        The checked settings.

    Raises:
        ConfigError: the file is missing or unreadable, or a setting is wrong.
    """
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"config file not found: {path}") from exc
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read config file: {exc.strerror or exc}") from exc
    _apply_env(data, os.environ if environ is None else environ)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_error(exc)) from None
