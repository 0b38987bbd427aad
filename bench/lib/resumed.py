"""A long benchmark run that a second run with the same arguments resumes: each item is
checked once, and its record appended to a JSON-lines file as soon as it is made."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

__all__ = ["append_record", "read_records", "run_resumed"]

Record = dict[str, Any]


def read_records(out: Path) -> list[Record]:
    """The records ``out`` holds, in order (none when it does not exist yet)."""
    if not out.exists():
        return []
    return [json.loads(text) for text in out.read_text("utf-8").splitlines()]


def append_record(out: Path, record: Record) -> None:
    """Append ``record`` to ``out`` as one line, at once, so a stopped run keeps it."""
    with out.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")


async def run_resumed(
    items: list[Record],
    out: Path,
    key: str,
    check: Callable[[Record], Awaitable[Record]],
    *,
    done_only: bool = False,
    line: Callable[[Record, Record], str] | None = None,
) -> list[Record]:
    """The record of each item, in order: read back from ``out`` (keyed by the item's
    ``key``), or made by ``check`` and appended there. ``done_only`` keeps only the items
    already in ``out`` and checks none; ``line`` (record, item) is printed on stderr for
    each item checked."""
    done = {record[key]: record for record in read_records(out)}
    if done_only:
        items = [item for item in items if item[key] in done]
    for item in items:
        if item[key] not in done:
            record = done[item[key]] = await check(item)
            append_record(out, record)
            if line is not None:
                print(line(record, item), file=sys.stderr, flush=True)
    return [done[item[key]] for item in items]
