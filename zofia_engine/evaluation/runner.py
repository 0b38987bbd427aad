"""Running an evaluation: items through a checker, results appended as they come.

The output is a JSONL file. Each invocation appends a ``run`` line (the run
key, the settings of the run and the sampled item ids), then one ``item``
line per finished item, flushed at once. An interrupted run therefore
continues where it stopped: items that already have a line with the same
run key are not checked again (``rerun`` redoes them, ``retry_errors`` only
the failed ones); when an id has several lines the last one counts.

The run key is a hash of the mode, the ablation, the label mapping, the
models the roles are routed to, and the settings that change an answer
(:func:`method_settings`). The sample (``limit``, ``seed``) is not part
of it, so a larger sample reuses the items a smaller one already checked.

An item whose check raised is recorded with ``error`` set and ``predicted``
``None``: it is scored as a miss and counted in ``Metrics.errors``; the mean
cost per item is taken over the items that did not raise.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..config import EngineSettings
from ..ports import CheckFunction
from ..post import Post
from ..report import TRIAGED
from .abstention import Judged, selective
from .dataset import EvalItem, LabelMapping
from .metrics import Metrics, score

__all__ = [
    "CheckFunction",
    "ItemRecord",
    "ResultLog",
    "RunHeader",
    "evaluate",
    "method_settings",
    "run_key",
    "summarise",
]


class ItemRecord(BaseModel):
    """One finished item, as one line of the output."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["item"] = "item"
    run_key: str
    id: str
    gold: str
    raw_label: str
    predicted: str | None
    verdict: str | None
    confidence: float | None = None
    llm_calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    error: str = ""
    degraded: list[str] = []
    mode: str
    ablation: str
    finished: str = ""
    # Searching again: the evidence found by planned searches (its URLs), their model
    # calls and seconds (the retrieval benches score these).
    evidence_urls: list[str] = []
    planned_urls: list[str] = []
    planned_calls: int = 0
    planned_s: float = 0.0


class RunHeader(BaseModel):
    """What one invocation ran, written before its items."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["run"] = "run"
    run_key: str
    dataset: str
    mode: str
    ablation: str
    labels: str
    models: dict[str, str]
    limit: int | None
    seed: int
    sample: list[str]
    started: str
    method: dict[str, Any] = {}


def method_settings(settings: EngineSettings) -> dict[str, Any]:
    """The settings that change what a check answers: Stage 1's models and
    hyperparameters, the sources, the agents' settings (θ_sim, the evidence rule …),
    the debate (style, rounds, early stop), triage, the search mode, the evidence's
    weighing, the tree of claims, the fact-check sources and the temperature. No secrets,
    timeouts or rates: those change only how fast."""
    return {
        "ner": settings.ner.model_dump(mode="json"),
        "encoder": settings.encoder.model_dump(mode="json", include={"model"}),
        "keywords": settings.keywords.model_dump(mode="json"),
        "web": {"backends": settings.web.backends, "max_results": settings.web.max_results},
        "wikipedia": settings.wikipedia.backend,
        "agents": settings.agents.model_dump(mode="json"),
        "debate": settings.debate.model_dump(mode="json"),
        "triage": settings.triage.model_dump(mode="json"),
        "retrieval": settings.retrieval.model_dump(mode="json"),
        "evidence": settings.evidence.model_dump(mode="json"),
        "tree": settings.tree.model_dump(mode="json"),
        "factcheck": {
            "backends": settings.factcheck.backends,
            "min_similarity": settings.factcheck.min_similarity,
        },
        "temperature": settings.llm.temperature,
    }


def run_key(
    mode: str,
    ablation: str,
    labels: str,
    models: dict[str, str],
    method: dict[str, Any] | None = None,
) -> str:
    """A short hash naming what makes two results comparable: the mode, the ablation,
    the label mapping, the models and :func:`method_settings`."""
    blob = json.dumps(
        {
            "mode": mode,
            "ablation": ablation,
            "labels": labels,
            "models": models,
            "method": method or {},
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


class ResultLog:
    """The JSONL output file: reads what is done, appends what finishes."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def records(self, key: str) -> dict[str, ItemRecord]:
        """Item id → its last record with run key ``key``; unreadable lines are skipped
        (a line cut short by a crash is the only kind expected)."""
        done: dict[str, ItemRecord] = {}
        if not self.path.exists():
            return done
        with self.path.open(encoding="utf-8") as f:
            for line in f:
                try:
                    row = json.loads(line)
                    if row.get("type") != "item" or row.get("run_key") != key:
                        continue
                    record = ItemRecord.model_validate(row)
                except (json.JSONDecodeError, ValidationError, AttributeError):
                    continue
                done[record.id] = record
        return done

    def append(self, row: BaseModel) -> None:
        """Write ``row`` as one line and flush it; a line cut short before is closed first."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a+b") as f:
            cut = f.tell() > 0 and f.seek(-1, 2) >= 0 and f.read(1) != b"\n"
            f.write((("\n" if cut else "") + row.model_dump_json() + "\n").encode())
            f.flush()


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


async def _check_one(
    item: EvalItem, checker: CheckFunction, mapping: LabelMapping, header: RunHeader
) -> ItemRecord:
    """``item`` checked, as a record of the run ``header`` opens."""
    post = Post(text=item.text, published=item.published)
    started = time.perf_counter()
    base: dict[str, Any] = {
        "run_key": header.run_key,
        "id": item.id,
        "gold": item.gold,
        "raw_label": item.raw_label,
        "mode": header.mode,
        "ablation": header.ablation,
    }
    try:
        report = await checker(post)
    except Exception as exc:  # recorded and scored as a miss, never fatal to the run
        wall = round(time.perf_counter() - started, 3)
        error = f"{type(exc).__name__}: {exc}"
        return ItemRecord(
            **base, predicted=None, verdict=None, wall_s=wall, error=error, finished=_now()
        )
    usage = report.usage
    return ItemRecord(
        **base,
        predicted=mapping.predicted(report.verdict),
        verdict=report.verdict,
        confidence=report.confidence.value,
        llm_calls=usage.calls,
        failed_calls=usage.failed_calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        wall_s=round(time.perf_counter() - started, 3),
        degraded=report.degraded,
        finished=_now(),
        evidence_urls=[e.url for e in report.evidence],
        planned_urls=[e.url for e in report.evidence if e.query == "planned"],
        planned_calls=sum(1 for c in usage.log if c.step.startswith("search:")),
        planned_s=round(report.timings.get("search_ms", 0.0) / 1000, 3),
    )


async def evaluate(
    items: Sequence[EvalItem],
    checker: CheckFunction,
    log: ResultLog,
    header: RunHeader,
    mapping: LabelMapping,
    *,
    concurrency: int = 1,
    rerun: bool = False,
    retry_errors: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_done: Callable[[ItemRecord], None] | None = None,
) -> dict[str, ItemRecord]:
    """Check the items not yet done, at most ``concurrency`` at a time.

    Args:
        items: the sample, in order.
        checker: ``Engine.check`` (with its ablation bound) or the baseline's ``check``.
        log: where records are read from and appended to.
        header: this run; written first, its ``run_key`` marks every record.
        mapping: turns verdicts into the scored classes.
        rerun: check every item again, done or not.
        retry_errors: check again the items whose record has an error.
        on_start: called with the counts of items already done and to do.
        on_done: called after each item is recorded (progress displays).

    Returns:
        Item id → record, for every item of the sample.
    """
    key = header.run_key
    done = {} if rerun else log.records(key)
    if retry_errors:
        done = {i: r for i, r in done.items() if not r.error}
    log.append(header)
    results = {item.id: done[item.id] for item in items if item.id in done}
    todo = [item for item in items if item.id not in done]
    gate = asyncio.Semaphore(max(1, concurrency))
    if on_start is not None:
        on_start(len(results), len(todo))

    async def one(item: EvalItem) -> None:
        async with gate:
            record = await _check_one(item, checker, mapping, header)
        log.append(record)
        results[item.id] = record
        if on_done is not None:
            on_done(record)

    async with asyncio.TaskGroup() as tg:
        for item in todo:
            tg.create_task(one(item))
    return {item.id: results[item.id] for item in items}


def summarise(
    records: Iterable[ItemRecord],
    classes: Sequence[str],
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> Metrics:
    """The metrics of ``records``: quality, bootstrap intervals and mean cost per item."""
    rows = list(records)
    metrics = score(
        [r.gold for r in rows],
        [r.predicted for r in rows],
        classes,
        resamples=resamples,
        seed=seed,
    )
    ran = [r for r in rows if not r.error]  # a check that raised has no cost to average
    m = len(ran) or 1
    judged = [Judged(r.gold, r.predicted, r.confidence, skipped=r.verdict in TRIAGED) for r in rows]
    return metrics.model_copy(
        update={
            "selective": selective(judged, classes),
            "undetermined": sum(1 for r in rows if not r.error and r.predicted is None),
            "errors": sum(1 for r in rows if r.error),
            "mean_llm_calls": sum(r.llm_calls for r in ran) / m,
            "mean_prompt_tokens": sum(r.prompt_tokens for r in ran) / m,
            "mean_completion_tokens": sum(r.completion_tokens for r in ran) / m,
            "mean_wall_s": sum(r.wall_s for r in ran) / m,
        }
    )
