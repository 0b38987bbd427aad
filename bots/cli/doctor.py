"""``zofia doctor``: what each configured part is, and whether it answers."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from storage.opening import store_status
from zofia_engine.diagnostics import Finding, Status, diagnose_engine

from .options import CONFIG_OPTION, settings_from

__all__ = ["doctor"]

_STYLE = {"ok": ("✓", "green"), "warning": ("!", "yellow"), "missing": ("✗", "red")}


def _storage(config: Path | None) -> Finding:
    settings = settings_from(config)
    try:
        status = store_status(settings.storage)
    except Exception as exc:  # a corrupt file: said, not raised
        return Finding("storage", "missing", f"failed: {exc}")
    pending = (
        f"; {len(status.pending)} migration(s) to apply on next open" if status.pending else ""
    )
    if isinstance(status.path, str):  # a server: its disk is not ours to measure
        return Finding("storage", "ok", f"{status.path}; schema {status.schema}{pending}")
    free = status.free_bytes / 2**30
    verdict: Status = "ok" if free >= 0.5 else "warning"
    summary = f"SQLite {status.path}; schema {status.schema}{pending}; {free:.1f} GiB free"
    return Finding("storage", verdict, summary)


def _bounds(config: Path | None) -> Finding:
    """The limits that protect the deployment, and how much of today's budget is spent."""
    settings = settings_from(config)
    s = settings.service
    used = store_status(settings.storage).tokens_today
    budget = f"{s.daily_token_budget:,} LLM tokens a day" if s.daily_token_budget else "no"
    summary = (
        f"{s.max_concurrent_checks} checks at once, at most {s.max_pending_checks} pending; "
        f"{budget} budget ({used:,} used today, UTC); per user {s.user_per_minute} a minute "
        f"and {s.user_daily} a day, per chat {s.chat_per_minute} a minute and "
        f"{s.chat_daily} a day"
    )
    spent = bool(s.daily_token_budget) and used >= s.daily_token_budget
    return Finding("limits", "warning" if spent else "ok", summary)


@click.command()
@CONFIG_OPTION
def doctor(config: Path | None) -> None:
    """Say what each configured part is and whether it answers (exit 1 if a check
    cannot run)."""
    settings = settings_from(config)
    console = Console()
    with console.status("trying every part…"):
        findings = asyncio.run(diagnose_engine(settings.engine))
        findings.append(_storage(config))
        findings.append(_bounds(config))
    for finding in findings:
        mark, colour = _STYLE[finding.status]
        console.print(
            Text.assemble((f"{mark} ", colour), (finding.part, "bold"), ": ", finding.summary)
        )
    missing = [f.part for f in findings if f.status == "missing"]
    if missing:
        raise click.ClickException(f"a check cannot run: fix {', '.join(missing)} first")
