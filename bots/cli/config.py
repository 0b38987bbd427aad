"""``zofia config``: every setting with its default, as TOML or as the reference page."""

from __future__ import annotations

import click

from bots.app.settings import Settings
from bots.app.settings_reference import defaults_toml, reference_markdown

__all__ = ["config"]


@click.command()
@click.option(
    "--defaults",
    "shown",
    flag_value="defaults",
    default=True,
    help="Every setting with its default, as a TOML file (the default).",
)
@click.option(
    "--reference",
    "shown",
    flag_value="reference",
    help="The settings reference page (docs/settings.md), as Markdown.",
)
def config(shown: str) -> None:
    """Print every setting with its default (the offline defaults, no file read)."""
    settings = Settings()
    click.echo(
        defaults_toml(settings) if shown == "defaults" else reference_markdown(settings), nl=False
    )
