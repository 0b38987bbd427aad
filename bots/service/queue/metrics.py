"""Prometheus metrics of workers and bots (``prometheus-client``), served on ``/metrics``.

Counters live in the process that does the work: a worker counts the checks it ran
and their LLM tokens, a bot the cards it delivered. Queue depth is read from the
database when scraped, so any process reports the deployment's.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

__all__ = [
    "CHECKS",
    "CHECK_SECONDS",
    "DELIVERIES",
    "LLM_TOKENS",
    "QueueDepthCollector",
    "watch_queue_depth",
]

CHECKS = Counter(
    "zofia_checks", "Engine runs finished, by outcome (verdict, or 'failed')", ["outcome"]
)
CHECK_SECONDS = Histogram(
    "zofia_check_seconds",
    "Engine run time of a check",
    buckets=(1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200),
)
LLM_TOKENS = Counter("zofia_llm_tokens", "LLM tokens spent by checks", ["kind"])
DELIVERIES = Counter("zofia_deliveries", "Cards posted by deliver jobs, by platform", ["platform"])


class QueueDepthCollector(Collector):
    """``zofia_queue_depth{queue, status}``: jobs waiting and running, read on scrape."""

    def __init__(self, read: Callable[[], list[tuple[str, str, int]]]) -> None:
        self.read = read

    def collect(self):  # type: ignore[no-untyped-def]
        family = GaugeMetricFamily(
            "zofia_queue_depth",
            "Jobs in the queue, by queue and status",
            labels=["queue", "status"],
        )
        try:
            rows = self.read()
        except Exception:  # a scrape while the database is away: no figure, not an error
            rows = []
        for queue, status, count in rows:
            family.add_metric([queue, status], count)
        yield family


def watch_queue_depth(
    read: Callable[[], list[tuple[str, str, int]]], registry: CollectorRegistry = REGISTRY
) -> QueueDepthCollector:
    """Register the queue-depth gauge (once per process)."""
    collector = QueueDepthCollector(read)
    registry.register(collector)
    return collector
