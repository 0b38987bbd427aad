"""The options several commands share, and the settings they lead to."""

from __future__ import annotations

from pathlib import Path

import click

from bots.app.settings import CONFIG_ENV, Settings, load_settings
from zofia_engine.errors import ZofiaError
from zofia_engine.post import ABLATIONS

__all__ = ["ABLATE_OPTION", "CONFIG_OPTION", "settings_from"]

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
    """The settings for a command, or one clear error that names the wrong setting."""
    try:
        return load_settings(config)
    except ZofiaError as exc:
        raise click.ClickException(str(exc)) from None
