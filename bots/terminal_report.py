"""Terminal rendering of a report and of a check's progress (rich). Renders only."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from zofia_engine.post import ProgressEvent
from zofia_engine.report import Report

from .terminal_text import plain

__all__ = ["VERDICT_STYLE", "describe_event", "render_report"]

VERDICT_STYLE = {
    "real": ("✅", "green", "Likely real"),
    "fake": ("❌", "red", "Likely fake"),
    "undetermined": ("❔", "yellow", "Undetermined"),
}
LABEL_STYLE = {"supports": "green", "refutes": "red", "not enough information": "yellow"}
STAGE_NAMES = {
    "retrieval": "entity-guided retrieval",
    "linguist": "linguist (5 dimensions)",
    "expert": "domain expert",
    "claims": "claim verification",
    "debate": "debate",
    "verdict": "verdict",
}


def describe_event(event: ProgressEvent) -> str:
    """One line for a progress event: ``debate round 2: continue``."""
    name = STAGE_NAMES.get(event.stage, event.stage)
    if event.kind == "round":
        return f"debate round {event.round}: judge says {event.detail}"
    detail = f" ({event.detail})" if event.detail else ""
    return f"{name} {event.kind}{detail}"


def _card(report: Report) -> Panel:
    icon, colour, words = VERDICT_STYLE[report.verdict]
    c = report.confidence
    confidence = f"{c.value:.0%}" if c.value is not None else "n/a"
    title = Text.assemble(f"{icon} ", (words, f"bold {colour}"), f"  confidence {confidence}")
    parts: list[RenderableType] = [plain(report.summary)]
    cited = [e for e in report.evidence if e.url][:3]
    for e in cited:
        parts.append(Text.assemble(("• ", "dim"), plain(e.title), plain(f"  {e.url}", "cyan")))
    if report.debate.forced and report.debate.held:
        parts.append(Text("The judge did not decide within the round limit: ruling forced.", "dim"))
    return Panel(Group(*parts), title=title, title_align="left", border_style=colour)


def _claims(report: Report) -> Table:
    table = Table(title="Claims", title_justify="left")
    table.add_column("claim")
    table.add_column("label")
    table.add_column("reason")
    for claim in report.claims:
        label = claim.label or claim.status
        table.add_row(
            plain(("★ " if claim.kind == "core" else "") + claim.text),
            plain(label, LABEL_STYLE.get(label, "dim")),
            plain(claim.reason or claim.error),
        )
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
    for t in d.turns:
        text = f"{t.rebuttal}\n{t.argument}".strip() if t.status == "ok" else t.error
        table.add_row(str(t.round), t.side, plain(text), plain(", ".join(t.cites)))
    for r in d.rulings:
        decision = r.decision or "failed"
        label = f"judge{' (forced)' if r.forced else ''}"
        table.add_row(str(r.round), label, plain(f"{decision}: {r.reason or r.error}"), "")
    return table


def render_report(report: Report, console: Console, *, details: bool = True) -> None:
    """Print the verdict card, then (with ``details``) claims, analyses, debate, usage."""
    parts: list[RenderableType] = [_card(report)]
    if details:
        if report.claims:
            parts.append(_claims(report))
        if report.analyses.linguist or report.analyses.expert:
            parts.append(_analyses(report))
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
