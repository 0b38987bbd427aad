"""``zofia history``, ``zofia show`` and ``zofia export``: reading the store."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Iterator
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bots.render.card import VERDICTS
from bots.service.shown import report_of
from storage.opening import open_store
from storage.store import CheckStore
from zofia_engine.evaluation.dataset import LABEL_MAPPINGS

from .options import CONFIG_OPTION, settings_from
from .report_view import render_report
from .text import plain

__all__ = ["export", "history", "show"]

#: what ``export --reviewed`` says on stderr before it writes
REVIEWED_WARNING = (
    "The reviewed items hold the full text of the posts people sent to the bot: keep the"
    " file private, and delete it when the evaluation is done."
)


def item_id(secret: bytes, check_id: str) -> str:
    """An exported item's id: an HMAC of its check's id, keyed with the store's secret
    (stable across exports, and no key to a report page)."""
    return hmac.new(secret, f"export:{check_id}".encode(), hashlib.sha256).hexdigest()[:20]


#: the verdicts a reviewed check can be scored on
SCORED = frozenset(LABEL_MAPPINGS["verdicts"].gold)


def _store(config: Path | None) -> CheckStore:
    return open_store(settings_from(config).storage)[0]


@click.command()
@click.option("--limit", default=20, show_default=True, help="How many checks to list.")
@click.option("--platform", help="Only checks from this platform (cli, telegram, discord).")
@CONFIG_OPTION
def history(limit: int, platform: str | None, config: Path | None) -> None:
    """List the latest checks, newest first."""
    table = Table(title="Checks", title_justify="left")
    for column in ("id", "when", "platform", "status", "verdict"):
        table.add_column(column, no_wrap=True)
    table.add_column("post", overflow="ellipsis", no_wrap=True, max_width=40)
    for row, verdict in _store(config).checks.history(limit=limit, platform=platform):
        icon = VERDICTS[verdict][0] + " " if verdict in VERDICTS else ""
        note = f" ({row.repeat_kind} repeat)" if row.repeat_of else ""
        post = (row.post_text or "(purged)").replace("\n", " ")
        table.add_row(
            row.id,
            row.created_at.strftime("%Y-%m-%d %H:%M"),
            row.platform,
            row.status + note,
            f"{icon}{verdict or '-'}",
            plain(post[:60] + ("…" if len(post) > 60 else "")),
        )
    console = Console()
    if not console.is_terminal:  # piped: no terminal width to fit, keep rows whole
        console.width = 200
    console.print(table)


@click.command()
@click.argument("check_id")
@click.option("--json", "as_json", is_flag=True, help="Print the stored report as JSON.")
@CONFIG_OPTION
def show(check_id: str, as_json: bool, config: Path | None) -> None:
    """Show a stored check: the verdict card, claims, analyses, the debate and evidence."""
    store = _store(config)
    row = store.checks.get(check_id)
    if row is None:
        raise click.ClickException(f"no check with id {check_id}")
    found = report_of(store, check_id)
    if found is None:
        detail = row.error or (
            "its text was purged" if row.status == "done" else f"it is {row.status}"
        )
        raise click.ClickException(f"check {check_id} has no report: {detail}")
    report = found[1]
    if as_json:
        click.echo(report.model_dump_json(indent=2))
        return
    console = Console()
    if row.repeat_of:
        console.print(f"[dim]{row.repeat_kind} repeat of check {row.repeat_of}[/dim]")
    render_report(report, console)
    for item in report.evidence:
        console.print(
            Text.assemble(
                plain(f"[{item.id}] ", "bold"), plain(item.title), plain(f"  {item.url}", "cyan")
            )
        )


@click.command()
@click.option("--jsonl", "as_jsonl", is_flag=True, required=True, help="One JSON object a line.")
@click.option(
    "--reviewed",
    is_flag=True,
    help="Only the checks reviewed for every chat (by the reviewers the settings name, or "
    "zofia review), as evaluation items: the post's text, the reviewed verdict as 'label' "
    "and the machine's as 'machine' (zofia eval FILE --labels verdicts). Never a note.",
)
@click.option(
    "--chat-reviews",
    is_flag=True,
    help="With --reviewed: take chats' moderators' reviews too (anyone who made a group "
    "can make one, and each applies in its own chat only).",
)
@click.option(
    "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here, not stdout."
)
@CONFIG_OPTION
def export(
    as_jsonl: bool, reviewed: bool, chat_reviews: bool, output: Path | None, config: Path | None
) -> None:
    """Export every finished check with its report; requesters appear only as hashes."""
    if chat_reviews and not reviewed:
        raise click.UsageError("--chat-reviews goes with --reviewed.")
    store, secret = open_store(settings_from(config).storage)
    items = _reviewed_items(store, secret, chat_reviews) if reviewed else store.reports.export()
    if reviewed:
        click.echo(REVIEWED_WARNING, err=True)
    lines = (json.dumps(item, default=str) for item in items)
    if output is None:
        for line in lines:
            click.echo(line)
        return
    count = 0
    # Created readable by its owner only, like the database it comes from.
    with os.fdopen(os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
        for count, line in enumerate(lines, 1):  # noqa: B007  (the count is reported)
            out.write(line + "\n")
    click.echo(f"wrote {count} checks to {output}", err=True)


def _reviewed_items(
    store: CheckStore, secret: bytes, chat_reviews: bool
) -> Iterator[dict[str, object]]:
    """The reviewed checks a dataset can use (:meth:`~storage.reports.Reports.reviewed`):
    a text still stored, a verdict to score (a review to ``unproven`` is an abstention,
    not a label); says on stderr how many were left out. An item's ``id`` is an HMAC of
    its check's id, not the id: a check id is the key of its public report page."""
    left_out = 0
    for row in store.reports.reviewed(chat_reviews=chat_reviews):
        if row["text"] is None or row["label"] not in SCORED:
            left_out += 1
            continue
        yield {**row, "id": item_id(secret, str(row["id"]))}
    if left_out:
        click.echo(
            f"left out {left_out} reviewed checks (text purged, or reviewed unproven)", err=True
        )
