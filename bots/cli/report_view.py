"""Terminal rendering of a report and of a check's progress (rich). Renders only."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from bots.render.card import VerdictCard, report_card
from bots.render.sections import panel_not_asked, section
from zofia_engine.report import JudgeRuling, Report

from .text import plain

__all__ = ["VERDICT_COLOURS", "render_report"]

#: verdict → rich colour (the icon, words and notes come from the card)
VERDICT_COLOURS = {
    "true": "green",
    "false": "red",
    "misleading": "dark_orange",
    "unproven": "grey70",
    "undetermined": "yellow",
    "no_claim": "grey50",
    "satire": "magenta",
    "scam": "bold red",
}


def _card(card: VerdictCard) -> Panel:
    """The same verdict card the chats show, in the terminal's colours."""
    colour = VERDICT_COLOURS.get(card.verdict, "white")
    confidence = card.confidence or "n/a"
    title = Text.assemble(
        f"{card.icon} ", (card.headline, f"bold {colour}"), f"  confidence {confidence}"
    )
    parts: list[RenderableType] = [plain(card.lean)] if card.lean else []
    if card.checked:
        parts.append(plain(card.checked, "dim"))
    parts.extend(
        Text.assemble(plain(link.title, "bold"), plain(f"  {link.url}", "cyan"))
        for link in card.checked_by
    )
    parts.append(plain(card.summary))
    for link in card.links:
        parts.append(
            Text.assemble(("• ", "dim"), plain(link.title), plain(f"  {link.url}", "cyan"))
        )
    if card.repeat_note:
        parts.append(plain(card.repeat_note, "dim"))
    parts.extend(plain(note, "dim") for note in card.notes)
    return Panel(Group(*parts), title=title, title_align="left", border_style=colour)


def _section(kind: str, report: Report) -> Table:
    """The Claims or Evidence section the chats open, as a table: heading, then body."""
    part = section(kind, report)
    table = Table(title=part.title, title_justify="left", show_header=False)
    table.add_column(kind)
    for block in part.blocks:
        url = f"\n{block.url}" if block.url else ""
        table.add_row(Text.assemble(plain(block.heading, "bold"), "\n", plain(block.body + url)))
    return table


def _analyses(report: Report) -> Table:
    table = Table(title="Analyses", title_justify="left")
    table.add_column("agent")
    table.add_column("lean")
    table.add_column("analysis")
    for f in report.analyses.linguist:
        table.add_row(
            plain(f"linguist: {f.dimension}"),
            plain(f.lean or f.status),
            plain(f.analysis or f.error),
        )
    e = report.analyses.expert
    if e is not None:
        text = f"{e.knowledge_concordance} {e.logical_integrity}".strip() or e.error
        table.add_row(plain(f"expert: {e.expert_role}"), plain(e.lean or e.status), plain(text))
    return table


def _debate(report: Report) -> Table:
    d = report.debate
    title = f"Debate ({d.rounds} of at most {d.max_rounds} rounds)"
    table = Table(title=title, title_justify="left")
    table.add_column("round", justify="right")
    table.add_column("side")
    table.add_column("argument")
    table.add_column("cites")
    for entry in d.timeline():
        if isinstance(entry, JudgeRuling):
            decision = entry.decision or "failed"
            label = f"judge{' (forced)' if entry.forced else ''}"
            text = f"{decision}: {entry.reason or entry.error}"
            table.add_row(str(entry.round), label, plain(text), "")
            continue
        text = (
            f"{entry.rebuttal}\n{entry.argument}".strip() if entry.status == "ok" else entry.error
        )
        table.add_row(str(entry.round), entry.side, plain(text), plain(", ".join(entry.cites)))
    return table


def render_report(
    report: Report, console: Console, *, card: VerdictCard | None = None, details: bool = True
) -> None:
    """Print the verdict card (``card``, or the report's own), then (with ``details``)
    claims, analyses, debate, what went wrong, and the usage."""
    card = card or report_card("", report)
    parts: list[RenderableType] = [_card(card)]
    if details:
        if report.claims:
            parts.append(_section("claims", report))
        if report.evidence:
            parts.append(_section("evidence", report))
        if report.analyses.linguist or report.analyses.expert:
            parts.append(_analyses(report))
        elif not report.analyses.held:
            parts.append(plain(panel_not_asked(report), "dim"))
        if report.debate.turns or report.debate.rulings:
            parts.append(_debate(report))
    for note in report.degraded:
        parts.append(plain(f"! {note}", "yellow"))
    u = report.usage
    total_s = report.timings.get("total_ms", 0.0) / 1000
    parts.append(
        Text(
            f"{u.calls} LLM calls, {u.prompt_tokens} prompt tokens ({u.cached_tokens} cached), "
            f"{u.completion_tokens} completion tokens, {total_s:.1f} s",
            style="dim",
        )
    )
    console.print(Group(*parts))
