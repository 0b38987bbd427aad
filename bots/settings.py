"""Where the front-ends find their settings: one rule for the CLI and the bots."""

from __future__ import annotations

import os
from pathlib import Path

import click

from zofia_engine.config import Settings, load_config
from zofia_engine.errors import ZofiaError
from zofia_engine.post import ABLATIONS

__all__ = ["ABLATE_OPTION", "CONFIG_ENV", "CONFIG_OPTION", "settings_from"]

CONFIG_ENV = "ZOFIA_CONFIG"

CONFIG_OPTION = click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"TOML settings file (default: ${CONFIG_ENV}, then ./zofia.toml).",
)

ABLATE_OPTION = click.option(
    "--ablate",
    type=click.Choice(list(ABLATIONS)),
    default="full",
    show_default=True,
    help="Leave out parts of the method (the paper's Table 2).",
)


def settings_from(config: Path | None) -> Settings:
    """``--config``, else $ZOFIA_CONFIG, else ./zofia.toml if present, else defaults."""
    if config is None and os.environ.get(CONFIG_ENV):
        config = Path(os.environ[CONFIG_ENV])
    if config is None and Path("zofia.toml").is_file():
        config = Path("zofia.toml")
    try:
        return load_config(config)
    except ZofiaError as exc:
        raise click.ClickException(str(exc)) from None
