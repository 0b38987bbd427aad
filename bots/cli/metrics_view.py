"""An evaluation's metrics as rich tables (``zofia eval``): the summary, per class, the
confusion matrix, and where the checker answered."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from zofia_engine.evaluation import Metrics
from zofia_engine.evaluation.abstention import CONFIDENT, Selective
from zofia_engine.evaluation.metrics import NONE_COLUMN

__all__ = ["render_metrics", "render_selective"]


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def render_metrics(metrics: Metrics, title: str, console: Console) -> None:
    """The metrics as rich tables: summary, per class, confusion matrix."""
    summary = Table(title=title, show_header=False)
    summary.add_column("metric")
    summary.add_column("value", justify="right")

    def ci(interval: object) -> str:
        low, high = getattr(interval, "low", None), getattr(interval, "high", None)
        return f" [{_pct(low)}, {_pct(high)}]" if low is not None and high is not None else ""

    summary.add_row("items", str(metrics.items))
    summary.add_row("accuracy % (95% CI)", _pct(metrics.accuracy) + ci(metrics.accuracy_ci))
    summary.add_row("macro-F1 % (95% CI)", _pct(metrics.macro_f1) + ci(metrics.macro_f1_ci))
    summary.add_row("no verdict (scored wrong here)", str(metrics.undetermined))
    summary.add_row("failed items (scored wrong)", str(metrics.errors))
    summary.add_row("mean LLM calls / item", f"{metrics.mean_llm_calls:.1f}")
    summary.add_row("mean prompt tokens / item", f"{metrics.mean_prompt_tokens:.0f}")
    summary.add_row("mean completion tokens / item", f"{metrics.mean_completion_tokens:.0f}")
    summary.add_row("mean wall time / item (s)", f"{metrics.mean_wall_s:.1f}")
    if metrics.agreement is not None:
        runs = f"items whose {metrics.repeat} runs all agree %"
        summary.add_row(runs, _pct(metrics.agreement))
    console.print(summary)

    per_class = Table(title="per class")
    for name in ("class", "precision %", "recall %", "F1 %", "support"):
        per_class.add_column(name, justify="left" if name == "class" else "right")
    for label, s in metrics.per_class.items():
        per_class.add_row(label, _pct(s.precision), _pct(s.recall), _pct(s.f1), str(s.support))
    console.print(per_class)

    matrix = Table(title="confusion (rows gold, columns predicted)")
    matrix.add_column("gold \\ predicted")
    columns = [*metrics.classes, NONE_COLUMN]
    for column in columns:
        matrix.add_column(column, justify="right")
    for gold, row in metrics.confusion.items():
        matrix.add_row(gold, *(str(row[c]) for c in columns))
    console.print(matrix)
    if metrics.selective is not None:
        render_selective(metrics.selective, console)


def _maybe(value: float | None) -> str:
    return "-" if value is None else _pct(value)


def render_selective(sel: Selective, console: Console) -> None:
    """Where the checker answered: coverage, covered quality, risk and calibration."""
    table = Table(title="answered items (unproven is an abstention)", show_header=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("coverage %", f"{_pct(sel.coverage)} ({sel.covered} of {sel.items})")
    table.add_row("accuracy on covered %", _maybe(sel.covered_accuracy))
    table.add_row("macro-F1 on covered %", _maybe(sel.covered_macro_f1))
    table.add_row(f"confidently wrong (≥ {CONFIDENT:.0%}) % of items", _pct(sel.confidently_wrong))
    table.add_row("expected calibration error", "-" if sel.ece is None else f"{sel.ece:.3f}")
    table.add_row("skipped by triage (all items are claims)", str(sel.triage_skipped))
    console.print(table)
    curve = Table(title="risk against coverage")
    for name in ("confidence ≥", "coverage %", "risk %"):
        curve.add_column(name, justify="right")
    for point in sel.risk_coverage:
        curve.add_row(f"{point.threshold:.1f}", _pct(point.coverage), _maybe(point.risk))
    console.print(curve)
    bins = Table(title="reliability (confidence against accuracy)")
    for name in ("confidence", "items", "mean confidence %", "accuracy %"):
        bins.add_column(name, justify="right")
    for b in sel.reliability:
        bins.add_row(
            f"{b.low:.1f}-{b.high:.1f}", str(b.count), _maybe(b.confidence), _maybe(b.accuracy)
        )
    console.print(bins)
