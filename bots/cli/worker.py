"""``zofia worker`` runs checks from the job queue; ``zofia queue`` shows the queue.

Both need the store on PostgreSQL (``[storage] url``), where the queue lives.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
import signal
import socket
from pathlib import Path

import click

from bots.app.health import serving_health
from bots.app.json_logs import log_json_lines
from bots.app.settings import Settings

from .options import CONFIG_OPTION, settings_from

__all__ = ["queue", "worker"]

log = logging.getLogger(__name__)


def _postgres_settings(config: Path | None) -> Settings:
    settings = settings_from(config)
    if not settings.queued:
        raise click.ClickException(
            'the job queue lives in PostgreSQL: set [storage] url = "postgresql://…"'
            " (or ZOFIA__STORAGE__URL) and the same storage.secret as the bots"
        )
    return settings


@click.command()
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=None,
    help="Checks run at once in this process [default: queue.worker_concurrency].",
)
@CONFIG_OPTION
def worker(concurrency: int | None, config: Path | None) -> None:
    """Run checks from the job queue until SIGINT or SIGTERM (models are loaded once)."""
    settings = _postgres_settings(config)
    log_json_lines()
    try:
        asyncio.run(_work(settings, concurrency or settings.queue.worker_concurrency))
    except Exception as exc:  # start-up: one sentence, exit 1
        raise click.ClickException(f"the worker could not start: {exc}") from None


async def _work(settings: Settings, concurrency: int) -> None:
    from bots.service.queue.jobs import CHECKS_QUEUE, ensure_schema, make_app, queue_counts
    from bots.service.queue.metrics import watch_queue_depth
    from bots.service.queue.worker import CheckRunner, register_check_tasks, run_jobs
    from storage.opening import open_store
    from zofia_engine.engine import Engine

    store, _ = open_store(settings.storage)
    queue_db = store.postgres()
    await asyncio.to_thread(ensure_schema, queue_db)
    watch_queue_depth(lambda: queue_counts(queue_db))
    async with Engine(settings.engine) as engine:
        await engine.load()
        runner = CheckRunner(
            engine,
            store,
            engine.retrieval.encoder,
            deliver_delay=dt.timedelta(seconds=settings.queue.deliver_delay_s),
        )
        app = make_app(settings.storage.url, max_connections=concurrency + 3)
        register_check_tasks(app, runner, settings.queue)
        name = f"worker@{socket.gethostname()}:{os.getpid()}"
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with app.open_async():
            jobs = asyncio.create_task(
                run_jobs(app, [CHECKS_QUEUE], settings.queue, concurrency=concurrency, name=name)
            )

            async def database() -> bool:
                await asyncio.to_thread(store.ping)
                return True

            async def taking_jobs() -> bool:
                return not jobs.done()

            probes = {"database": database, "jobs": taking_jobs}
            async with serving_health(settings.queue.health_port, probes):
                log.info("worker %s ready: %d checks at once", name, concurrency)
                print(f"worker ready: {name}", flush=True)
                await stop.wait()
                log.info("stopping: running checks are cut short and queued again")
                jobs.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await jobs
        runner.close()
    await asyncio.to_thread(store.close)  # once store calls still under way are through


_JOBS = """
SELECT j.id, j.queue_name, j.task_name, j.status, j.attempts, j.args->>'check_id',
  (SELECT max(at) FROM procrastinate_events e WHERE e.job_id = j.id AND e.type = 'deferred'),
  (SELECT max(at) FROM procrastinate_events e WHERE e.job_id = j.id AND e.type = 'started'),
  (SELECT max(at) FROM procrastinate_events e WHERE e.job_id = j.id AND e.type = 'failed'),
  (j.status = 'doing' AND (j.worker_id IS NULL OR w.last_heartbeat < now() - make_interval(
      secs => ?))) AS stalled
FROM procrastinate_jobs j LEFT JOIN procrastinate_workers w ON w.id = j.worker_id
WHERE j.status IN ('todo', 'doing', 'failed') ORDER BY j.status, j.id LIMIT ?
"""


def _age(moment: dt.datetime | None, now: dt.datetime) -> str:
    if moment is None:
        return "-"
    seconds = int((now - moment).total_seconds())
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"


@click.command()
@click.option("--limit", type=click.IntRange(1, 10_000), default=100, show_default=True)
@CONFIG_OPTION
def queue(limit: int, config: Path | None) -> None:
    """List queued, running, stalled and failed jobs, with their ages."""
    from bots.service.queue.jobs import ensure_schema
    from storage.postgres import PostgresDatabase
    from storage.sql import first_row

    settings = _postgres_settings(config)
    db = PostgresDatabase(settings.storage.url)
    try:
        ensure_schema(db)
        rows = db.execute(_JOBS, [settings.queue.stalled_after_s, limit]).fetchall()
        (now,) = first_row(db.execute("SELECT now()"))
    finally:
        db.close()
    counts: dict[str, int] = {}
    lines = []
    for (
        job_id,
        queue_name,
        task,
        status,
        attempts,
        check_id,
        queued,
        started,
        failed,
        stalled,
    ) in rows:
        state = {"todo": "queued", "doing": "running"}.get(status, status)
        state = "stalled" if stalled else state
        counts[state] = counts.get(state, 0) + 1
        age = _age(failed if status == "failed" else started if status == "doing" else queued, now)
        lines.append(
            f"{job_id:>8}  {state:<8} {age:>7}  {queue_name:<18} {task:<14}"
            f" attempts {attempts}  {check_id or ''}"
        )
    summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items())) or "empty"
    click.echo(f"queue: {summary}")
    for line in lines:
        click.echo(line)
