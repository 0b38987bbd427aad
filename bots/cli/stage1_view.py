"""Terminal rendering of Stage-1 results (rich). Renders only; computes nothing."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from zofia_engine.records.stage1 import Stage1Result

from .text import plain

__all__ = ["render_stage1"]

STATUS_STYLE = {
    "ok": "green",
    "empty": "yellow",
    "failed": "red",
    "disabled": "dim",
    "skipped": "dim",
}


def render_stage1(result: Stage1Result, console: Console) -> None:
    """Print entities, keywords, evidence and source status as tables."""
    entities = Table(title="Entities", title_justify="left", expand=False)
    for column in ("entity", "label", "confidence", "salience", "local", "global", "mentions"):
        entities.add_column(column, justify="left" if column in ("entity", "label") else "right")
    for e in sorted(result.entities, key=lambda e: -e.salience):
        entities.add_row(
            plain(e.text),
            e.label,
            f"{e.confidence:.3f}",
            f"{e.salience:.3f}",
            f"{e.local_salience:.3f}",
            f"{e.global_salience:.3f}",
            str(len(e.mentions)),
        )
    threshold = "-" if result.threshold is None else f"{result.threshold:.1f}"
    keywords = Table(title=f"Keywords (SC-MMR; NER threshold {threshold})", title_justify="left")
    for column in ("#", "keyword", "salience", "MMR", "λ_k"):
        keywords.add_column(column, justify="left" if column == "keyword" else "right")
    for i, k in enumerate(result.keywords, 1):
        keywords.add_row(
            str(i), plain(k.text), f"{k.salience:.3f}", f"{k.mmr_score:.3f}", f"{k.lambda_k:.3f}"
        )

    parts: list[object] = [entities, keywords, plain(f"query: {result.query}", "bold")]
    for w in result.wikipedia:
        parts.append(
            Panel(
                plain(w.text),
                title=plain(f"{w.keyword} → {w.title}"),
                subtitle=plain(w.url),
                expand=False,
            )
        )
    if result.web:
        web = Table(title="Open web", title_justify="left")
        web.add_column("title")
        web.add_column("url")
        for r in result.web:
            web.add_row(plain(r.title), plain(r.url))
        parts.append(web)
    lines = []
    for s in result.sources:
        line = Text.assemble((f"{s.name}: ", "bold"), (s.status, STATUS_STYLE[s.status]))
        if s.detail:
            line.append(f" ({s.detail})")
        lines.append(line)
    parts.append(Panel(Text("\n").join(lines), title="Sources", expand=False))
    for note in result.degraded:
        parts.append(plain(f"! {note}", "yellow"))
    total = result.timings_ms.get("total_ms", 0.0)
    parts.append(Text(f"Stage 1 took {total:.0f} ms", style="dim"))
    console.print(Group(*parts))  # type: ignore[arg-type]
