"""``zofia corpus index``: a local archive of checks made searchable offline."""

from __future__ import annotations

import json
from pathlib import Path

import click

from zofia_engine.errors import ZofiaError
from zofia_engine.retrieval.web.corpus import index_corpus

__all__ = ["corpus"]


@click.group()
def corpus() -> None:
    """Search a local archive (a newsroom's or a tipline's own checks) as a web backend."""


@corpus.command()
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("corpus.db"),
    show_default=True,
    help="The index file to write.",
)
@click.option("--replace", is_flag=True, help="Overwrite an existing index.")
def index(source: Path, output: Path, replace: bool) -> None:
    """Index SOURCE: a JSONL file (id, text; optional title, url, ISO date) or a folder
    of .jsonl, .txt and .md files."""
    try:
        count = index_corpus(source, output, replace=replace)
    except ZofiaError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(
            f"cannot index {source} into {output}: {exc.strerror or exc}"
        ) from None
    click.echo(f"indexed {count} documents into {output}")
    # A JSON string without \u escapes is a TOML basic string.
    path = json.dumps(str(output.resolve()), ensure_ascii=False)
    click.echo(
        "to search it, add to zofia.toml:\n\n"
        f'[web]\nbackends = ["corpus"]\n\n[web.corpus]\npath = {path}'
    )
