"""``zofia calibrate``: RADAR's early-stop thresholds for the configured judge model,
and whether contextual calibration helps its confidence (RADAR App. C)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from bots.app.settings import Settings
from zofia_engine.errors import ZofiaError
from zofia_engine.evaluation import load_items, sample_items
from zofia_engine.evaluation.calibration import (
    GridPoint,
    ItemScores,
    calibration_effect,
    grid_search,
    read_scores,
    scores_of,
)
from zofia_engine.evaluation.dataset import LABEL_MAPPINGS, EvalItem, LabelMapping
from zofia_engine.post import Post

from .options import CONFIG_OPTION, settings_from

__all__ = ["calibrate"]


async def _collect(
    settings: Settings, items: list[EvalItem], path: Path, err: Console
) -> dict[str, float] | None:
    """Check the items not yet in ``path`` with every round held; append their scores.
    Returns the judge's prior on a content-free post."""
    from zofia_engine.engine import Engine

    done = {s.id for s in read_scores(path)} if path.exists() else set()
    todo = [item for item in items if item.id not in done]
    async with Engine(settings.engine) as engine:
        with err.status("loading models…"):
            await engine.load()
        for n, item in enumerate(todo, 1):
            err.print(f"[dim]{n}/{len(todo)} {item.id}[/dim]")
            report = await engine.check(Post(text=item.text, published=item.published))
            with path.open("a", encoding="utf-8") as out:
                out.write(scores_of(item.id, item.gold, report).model_dump_json() + "\n")
        return await engine.judge_prior()


def _model_key(settings: Settings) -> str:
    from zofia_engine.llm.router import LLMRouter

    return LLMRouter(settings.engine.llm).routes["judge"].model


@click.command()
@click.argument("dataset", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--labels", type=click.Choice(["auto", *LABEL_MAPPINGS]), default="auto")
@click.option("--limit", type=click.IntRange(min=1), help="Calibrate on a fixed sample of N.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--scores",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The per-round scores, cached and resumed (default: calibrate-<dataset>.jsonl).",
)
@CONFIG_OPTION
def calibrate(
    dataset: Path,
    labels: str,
    limit: int | None,
    seed: int,
    scores: Path | None,
    config: Path | None,
) -> None:
    """Find the early-stop thresholds (τs, τv) for this judge model on DATASET (dev
    items), and say whether contextual calibration improves its confidence."""
    settings = settings_from(config)
    # Every round held, whatever the evidence: the full depth (the adaptive one holds a
    # single round when nothing is settled, and no round ruling to score).
    held = settings.engine.debate.model_copy(update={"early_stop": "never"})
    full = settings.engine.agents.model_copy(update={"depth": "full"})
    engine = settings.engine.model_copy(update={"debate": held, "agents": full})
    settings = settings.model_copy(update={"engine": engine})
    err, console = Console(stderr=True), Console()
    try:
        items, mapping = load_items(dataset, labels)
    except ZofiaError as exc:
        raise click.ClickException(str(exc)) from None
    sample = sample_items(items, limit, seed)
    path = scores or Path(f"calibrate-{dataset.stem}.jsonl")
    prior = asyncio.run(_collect(settings, sample, path, err))
    wanted = {item.id for item in sample}
    cached: list[ItemScores] = [s for s in read_scores(path) if s.id in wanted]
    best = _print_thresholds(console, cached, mapping, path)
    model = _model_key(settings)
    console.print("Paste into your settings file:")
    console.print(
        f'[debate.thresholds]\n"{model}" = [{best.stop_margin}, {best.verdict_confidence}]',
        markup=False,
        highlight=False,
    )
    _print_calibration_effect(console, cached, prior, mapping)


def _print_thresholds(
    console: Console, cached: list[ItemScores], mapping: LabelMapping, path: Path
) -> GridPoint:
    """The grid search's ten best early-stop thresholds, as a table; returns the best."""
    best, points = grid_search(cached, mapping)
    table = Table(title=f"early stop on {len(cached)} items ({path})")
    for name in ("τs", "τv", "accuracy %", "mean rounds", "stopped early"):
        table.add_column(name, justify="right")
    for point in points[:10]:
        table.add_row(
            f"{point.stop_margin:+.2f}",
            f"{point.verdict_confidence:.2f}",
            f"{100 * point.accuracy:.1f}",
            f"{point.mean_rounds:.2f}",
            str(point.stopped_early),
        )
    console.print(table)
    return best


def _print_calibration_effect(
    console: Console,
    cached: list[ItemScores],
    prior: dict[str, float] | None,
    mapping: LabelMapping,
) -> None:
    """Whether contextual calibration by the judge's ``prior`` lowers its expected
    calibration error on the final verdicts, and so whether to keep it on."""
    if prior is None:
        console.print("Contextual calibration: no token probabilities, so nothing to measure.")
        return
    before, after = calibration_effect(cached, prior, mapping)
    if before is None or after is None:
        console.print("Contextual calibration: no final verdict had probabilities.")
        return
    helps = after < before
    console.print(
        f"Contextual calibration: expected calibration error {before:.3f} as given, "
        f"{after:.3f} corrected; "
        + ("keep it: set [debate] contextual_calibration = true." if helps else "turn it off."),
        markup=False,
        highlight=False,
    )
