"""Consistency: the same items checked several times (``zofia eval --repeat K``).

Each sampled item becomes K items, ``<id>#run<k>``, checked and logged like any other
(an interrupted run resumes; a larger K reuses the runs a smaller one did). The metrics
count every run; :func:`agreement` is the share of items whose K runs all gave the
same verdict (RADAR and ZoFia report single runs; a bot's users meet repeated ones).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable

from .dataset import EvalItem
from .runner import ItemRecord

__all__ = ["RUN_MARK", "agreement", "repeated_items"]

RUN_MARK = "#run"


def repeated_items(items: Iterable[EvalItem], repeat: int) -> list[EvalItem]:
    """Each item ``repeat`` times, with its run's number in its id; once as it is."""
    if repeat <= 1:
        return list(items)
    return [
        dataclasses.replace(item, id=f"{item.id}{RUN_MARK}{run}")
        for item in items
        for run in range(1, repeat + 1)
    ]


def agreement(records: Iterable[ItemRecord]) -> float | None:
    """The share of items (runs grouped by the id before ``#run``) whose runs all gave
    the same verdict; ``None`` when no item ran more than once."""
    verdicts: dict[str, list[str | None]] = defaultdict(list)
    for record in records:
        base, mark, _ = record.id.rpartition(RUN_MARK)
        verdicts[base if mark else record.id].append(record.verdict)
    repeated = [v for v in verdicts.values() if len(v) > 1]
    if not repeated:
        return None
    return sum(1 for v in repeated if len(set(v)) == 1) / len(repeated)
