"""``zofia eval``: verdict quality on a labelled dataset, resumable, as in the paper's tables."""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from bots.app.settings import Settings
from zofia_engine.errors import ZofiaError
from zofia_engine.evaluation import (
    LABEL_MAPPINGS,
    CheckFunction,
    EvalItem,
    ItemRecord,
    LabelMapping,
    Metrics,
    OnlyLLMBaseline,
    ResultLog,
    RunHeader,
    agreement,
    evaluate,
    load_items,
    method_settings,
    repeated_items,
    run_key,
    sample_items,
    summarise,
)
from zofia_engine.evaluation.baseline import ROLE as BASELINE_ROLE
from zofia_engine.post import Ablation

from .metrics_view import render_metrics
from .options import ABLATE_OPTION, CONFIG_OPTION, settings_from
from .text import plain

if TYPE_CHECKING:
    from zofia_engine.engine import Engine

__all__ = ["default_output", "eval_command"]


def default_output(dataset: Path, mode: str) -> Path:
    """``eval-<dataset stem>-<mode>.jsonl`` in the working directory."""
    return Path(f"eval-{dataset.stem}-{mode}.jsonl")


def _progress(err: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[score]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err,
    )


def _runner(
    settings: Settings, baseline: bool, ablate: str
) -> tuple[Engine | OnlyLLMBaseline, dict[str, str], CheckFunction]:
    """What checks the items (the only-LLM baseline, or the engine with the parts
    ``ablate`` names left out), the models it runs by role, and its check function."""
    from zofia_engine.engine import Engine

    runner: Engine | OnlyLLMBaseline
    if baseline:
        runner = OnlyLLMBaseline(settings.engine)
        models = {BASELINE_ROLE: runner.llm.describe()[BASELINE_ROLE]}
        checker: CheckFunction = runner.check
    else:
        runner = Engine(settings.engine)
        models = runner.llm.describe()
        checker = functools.partial(runner.check, ablation=Ablation.named(ablate))
    return runner, models, checker


@dataclass(frozen=True)
class _Sample:
    """The items a run checks, in order, drawn from ``dataset`` with ``limit`` and
    ``seed`` (:func:`~zofia_engine.evaluation.sample_items`), and the mapping their
    verdicts are scored with."""

    items: list[EvalItem]
    mapping: LabelMapping
    dataset: str
    limit: int | None
    seed: int


def _header(
    settings: Settings, sample: _Sample, models: dict[str, str], *, mode: str, ablation: str
) -> RunHeader:
    """What this run is, written before its items: its key (what makes two results
    comparable), the method's settings, the models and the sample."""
    method = method_settings(settings.engine)
    labels = sample.mapping.name
    return RunHeader(
        run_key=run_key(mode, ablation, labels, models, method),
        method=method,
        mode=mode,
        ablation=ablation,
        labels=labels,
        models=models,
        sample=[item.id for item in sample.items],
        started=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        dataset=sample.dataset,
        limit=sample.limit,
        seed=sample.seed,
    )


async def _run(
    settings: Settings,
    sample: _Sample,
    baseline: bool,
    ablate: str,
    log: ResultLog,
    concurrency: int,
    rerun: bool,
    retry_errors: bool,
    err: Console,
) -> dict[str, ItemRecord]:
    mode = "only-llm" if baseline else "full"
    ablation = "none" if baseline else ablate
    runner, models, checker = _runner(settings, baseline, ablate)
    header = _header(settings, sample, models, mode=mode, ablation=ablation)
    items = sample.items
    async with runner:
        with err.status("loading models…"):
            await runner.load()
        with _progress(err) as bar:
            task = bar.add_task(mode if ablate == "full" else ablate, total=len(items), score="")
            right = [0, 0]

            def start(done: int, todo: int) -> None:
                if done:
                    err.print(f"[dim]{done} item(s) already done in {log.path}, {todo} to go[/dim]")
                bar.update(task, completed=done)

            def finished(record: ItemRecord) -> None:
                right[0] += record.predicted == record.gold
                right[1] += 1
                bar.update(task, advance=1, score=f"acc {right[0]}/{right[1]}")
                if record.error:
                    bar.console.print(plain(f"{record.id}: {record.error}", "red"))

            return await evaluate(
                items,
                checker,
                log,
                header,
                sample.mapping,
                concurrency=concurrency,
                rerun=rerun,
                retry_errors=retry_errors,
                on_start=start,
                on_done=finished,
            )


@click.command()
@click.argument("dataset", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--labels",
    type=click.Choice(["auto", *LABEL_MAPPINGS]),
    default="auto",
    show_default=True,
    help="How dataset labels map to scored classes (auto: binary, or liar-binary for LIAR).",
)
@click.option(
    "--baseline",
    type=click.Choice(["only-llm"]),
    help="Instead of the pipeline, one call to the judge's model with the post alone.",
)
@ABLATE_OPTION
@click.option("--limit", type=click.IntRange(min=1), help="Evaluate a fixed sample of N items.")
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the sample and of the bootstrap.",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Check each item K times; the metrics count every run and add how often "
    "an item's runs agree.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Items checked at the same time.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Results JSONL, appended to and resumed from "
    "(default: eval-<dataset>-<mode or ablation>.jsonl here).",
)
@click.option("--rerun", is_flag=True, help="Check every item again, even those already done.")
@click.option("--retry-errors", is_flag=True, help="Check again the items that failed.")
@click.option(
    "--bootstrap",
    type=click.IntRange(min=0),
    default=1000,
    show_default=True,
    help="Bootstrap resamples for the 95% intervals (0: none).",
)
@click.option(
    "--search-mode",
    type=click.Choice(["paper", "live"]),
    default="paper",
    show_default=True,
    help="paper: ZoFia's exclusions, so no answer is found where it was published; "
    "live: news and fact-check sites are evidence, as in the bots.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
@CONFIG_OPTION
def eval_command(
    dataset: Path,
    labels: str,
    baseline: str | None,
    ablate: str,
    limit: int | None,
    seed: int,
    repeat: int,
    concurrency: int,
    output: Path | None,
    rerun: bool,
    retry_errors: bool,
    bootstrap: int,
    search_mode: str,
    as_json: bool,
    config: Path | None,
) -> None:
    """Measure verdict quality on DATASET (JSONL: text or title+text or claim, and label).

    Results are stored item by item in the output file; running the same
    command again continues where it stopped.
    """
    if baseline and ablate != "full":
        raise click.UsageError("--ablate applies to the pipeline, not to --baseline")
    settings = _with_search_mode(settings_from(config), search_mode)
    err = Console(stderr=True)
    items, mapping = _load_dataset(dataset, labels)
    sample = repeated_items(sample_items(items, limit, seed), repeat)
    mode = baseline or ablate
    log = ResultLog(output or default_output(dataset, mode))
    err.print(
        f"[dim]{len(sample) // repeat} of {len(items)} items"
        + (f", {repeat} runs each" if repeat > 1 else "")
        + f" from {dataset.name}, labels {mapping.name}, "
        f"mode {mode}, search {search_mode}; results in {log.path}[/dim]"
    )
    try:
        records = asyncio.run(
            _run(
                settings,
                _Sample(sample, mapping, str(dataset), limit, seed),
                baseline is not None,
                ablate,
                log,
                concurrency,
                rerun,
                retry_errors,
                err,
            )
        )
    except ZofiaError as exc:
        raise click.ClickException(str(exc)) from None
    metrics = _metrics(records, mapping, bootstrap=bootstrap, seed=seed, repeat=repeat)
    if as_json:
        click.echo(metrics.model_dump_json(indent=2))
    else:
        render_metrics(metrics, f"{dataset.name}: {mode}", Console())


def _metrics(
    records: dict[str, ItemRecord], mapping: LabelMapping, *, bootstrap: int, seed: int, repeat: int
) -> Metrics:
    """The metrics of ``records`` (``bootstrap`` resamples), with the runs' agreement
    when each item ran ``repeat`` times."""
    metrics = summarise(records.values(), mapping.classes, resamples=bootstrap, seed=seed)
    if repeat > 1:
        metrics = metrics.model_copy(
            update={"repeat": repeat, "agreement": agreement(records.values())}
        )
    return metrics


def _with_search_mode(settings: Settings, search_mode: str) -> Settings:
    """``settings`` with ``[retrieval] mode`` set to ``search_mode``."""
    retrieval = settings.engine.retrieval.model_copy(update={"mode": search_mode})
    return settings.model_copy(
        update={"engine": settings.engine.model_copy(update={"retrieval": retrieval})}
    )


def _load_dataset(dataset: Path, labels: str) -> tuple[list[EvalItem], LabelMapping]:
    """The dataset's items and the label mapping ``labels`` names (or ``auto`` picks);
    a dataset that cannot be read ends the command with the reason, not a traceback."""
    try:
        return load_items(dataset, labels)
    except ZofiaError as exc:
        raise click.ClickException(str(exc)) from None
