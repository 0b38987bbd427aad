"""LIAR-PLUS val as real claims with their evidence in hand: a dev split to tune on and
a sealed test split, by claim.

A claim's split is a function of its id alone: the first byte of the SHA-256 of the id
(as text, ``"12134.json"``, ``"1"``), below 128 of 256 for ``dev``, else ``test``: about
half each (674 and 610 of the 1,284). Labels are binary, as ``liar-binary`` maps them:
pants-fire, false and barely-true are ``false``; half-true, mostly-true and true are
``true``. A sample is stratified by the six-way label, so each keeps its share.

Nothing of the dataset is copied into the repository: the items are read where they lie
(``../shared/data/liar_plus_val.jsonl``).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

__all__ = ["DEV_BELOW", "binary_label", "liar_items", "sample", "split_of"]

Split = Literal["dev", "test"]
DEV_BELOW = 128  # of 256: half of the claims are dev
_FALSE = ("pants-fire", "false", "barely-true")
_TRUE = ("half-true", "mostly-true", "true")


def split_of(item_id: str) -> Split:
    """The split the claim with ``item_id`` falls in (see the module's docstring)."""
    digest = hashlib.sha256(str(item_id).encode("utf-8")).digest()
    return "dev" if digest[0] < DEV_BELOW else "test"


def binary_label(raw: str) -> str:
    """LIAR's six-way label as ``true`` or ``false`` (half-true on the true side)."""
    label = raw.strip().lower()
    if label in _FALSE:
        return "false"
    if label in _TRUE:
        return "true"
    raise ValueError(f"not a LIAR label: {raw!r}")


def liar_items(path: Path, split: Split) -> list[dict[str, Any]]:
    """The claims of ``split`` in file order: ``id``, ``claim``, ``label`` (binary),
    ``raw_label`` (six-way)."""
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        item_id = str(row["id"])
        if split_of(item_id) != split:
            continue
        raw = str(row["label"]).strip().lower()
        items.append(
            {
                "id": item_id,
                "claim": str(row["claim"]),
                "label": binary_label(raw),
                "raw_label": raw,
            }
        )
    return items


def sample(items: Sequence[dict[str, Any]], limit: int | None, seed: int) -> list[dict[str, Any]]:
    """``limit`` items (all when ``None``), stratified by the six-way label: a round robin
    over the labels, each shuffled by ``seed``; in file order. A smaller limit with the
    same seed is a subset of a larger one."""
    if limit is None or limit >= len(items):
        return list(items)
    rng = random.Random(f"liar:{seed}")
    groups: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault(item["raw_label"], []).append(i)
    queues = [rng.sample(groups[k], len(groups[k])) for k in sorted(groups)]
    chosen: list[int] = []
    while len(chosen) < limit:
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop())
    return [items[i] for i in sorted(chosen)]
