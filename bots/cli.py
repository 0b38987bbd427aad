"""The ``zofia`` command line. A thin layer: each option is one argument of the engine."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import sys
from pathlib import Path

import click
from rich.console import Console

from zofia_engine.config import Settings, load_config
from zofia_engine.errors import ZofiaError

from .terminal import render_stage1

__all__ = ["main"]

CONFIG_ENV = "ZOFIA_CONFIG"


def _settings(config: Path | None) -> Settings:
    """``--config``, else $ZOFIA_CONFIG, else ./zofia.toml if present, else defaults."""
    if config is None and os.environ.get(CONFIG_ENV):
        config = Path(os.environ[CONFIG_ENV])
    if config is None and Path("zofia.toml").is_file():
        config = Path("zofia.toml")
    try:
        return load_config(config)
    except ZofiaError as exc:
        raise click.ClickException(str(exc)) from None


def _read_text(text: str) -> str:
    if text == "-":
        return sys.stdin.read()
    return text


@click.group()
@click.version_option(package_name="zofia-factcheck")
def main() -> None:
    """Fact-check posts with ZoFia: entity-guided retrieval and multi-LLM debate."""


@main.command()
@click.argument("text")
@click.option("--json", "as_json", is_flag=True, help="Print the Stage-1 result as JSON.")
@click.option(
    "--published",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    help="Publication date of the post; web search stops the day before.",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"TOML settings file (default: ${CONFIG_ENV}, then ./zofia.toml).",
)
def keywords(text: str, as_json: bool, published: dt.datetime | None, config: Path | None) -> None:
    """Run Stage 1 on TEXT ('-' reads standard input): entities, keywords, evidence."""
    from zofia_engine.retrieval.pipeline import EntityGuidedRetrieval

    settings = _settings(config)
    post = _read_text(text)

    async def run() -> str:
        async with EntityGuidedRetrieval(settings) as stage1:
            await stage1.load()
            result = await stage1.run(post, published=published.date() if published else None)
        return result.model_dump_json(indent=2) if as_json else result  # type: ignore[return-value]

    try:
        outcome = asyncio.run(run())
    except ZofiaError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(outcome)
    else:
        render_stage1(outcome, Console())  # type: ignore[arg-type]
