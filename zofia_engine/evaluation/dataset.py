"""Evaluation items: reading a JSONL dataset, mapping its labels, drawing a sample.

Each line is one JSON object with a ``label`` and the post's text in ``text``
(with ``title`` put first when present) or, for claim datasets such as LIAR,
in ``claim``. A publication date in ``publish_date``, ``published`` or
``date`` becomes the post's search cutoff.

Label mappings (``--labels``):

``binary``
    ``real`` / ``fake`` (also ``true`` / ``false``) as they are.
``liar-binary``
    LIAR's six labels in two: pants-fire, false, barely-true → ``fake``;
    half-true, mostly-true, true → ``real``.
``liar-3``
    LIAR's six labels in three: pants-fire, false, barely-true → ``false``;
    half-true → ``half-true``; mostly-true, true → ``true``. The engine's
    ``misleading`` (RADAR's half-true) is scored as ``half-true``.

``verdicts``
    The engine's own three verdicts (``true``, ``misleading``, ``false``) as they are:
    what ``zofia export --reviewed`` writes, a moderator's verdict as the label.

In every mapping ``true`` and ``false`` count as the real and the false side, and
``unproven`` is an abstention: the item is not covered (see the metrics).
``auto``
    ``liar-binary`` when a label only LIAR uses occurs (pants-fire, barely-true,
    half-true, mostly-true), ``verdicts`` when ``misleading`` does, else ``binary``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ZofiaError

__all__ = [
    "LABEL_MAPPINGS",
    "DatasetError",
    "EvalItem",
    "LabelMapping",
    "load_items",
    "sample_items",
]

DATE_FIELDS = ("publish_date", "published", "date")
_LIAR_LOW = ("pants-fire", "false", "barely-true")
_LIAR_HIGH = ("mostly-true", "true")
_LEGACY = {"real": "true", "fake": "false"}  # records written before the four outcomes


class DatasetError(ZofiaError):
    """The dataset cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class LabelMapping:
    """Dataset labels → the classes scored, and the engine's verdicts → those classes.

    Args:
        name: how ``--labels`` names it.
        classes: the classes scored, in the order tables show them.
        gold: dataset label (lower case) → class.
        verdicts: the engine's outcomes → class. ``unproven``, ``undetermined`` and
            triage's kinds are in none: the engine abstained (the item is not covered).
    """

    name: str
    classes: tuple[str, ...]
    gold: dict[str, str]
    verdicts: dict[str, str]

    def predicted(self, verdict: str) -> str | None:
        """The class a verdict counts as; ``None`` when the engine abstained."""
        return self.verdicts.get(_LEGACY.get(verdict, verdict))


LABEL_MAPPINGS: dict[str, LabelMapping] = {
    "binary": LabelMapping(
        "binary",
        ("real", "fake"),
        {"real": "real", "fake": "fake", "true": "real", "false": "fake"},
        # A post right in its facts but missing context that changes them is not real news.
        {"true": "real", "false": "fake", "misleading": "fake"},
    ),
    "liar-binary": LabelMapping(
        "liar-binary",
        ("real", "fake"),
        {
            **dict.fromkeys(_LIAR_LOW, "fake"),
            "half-true": "real",
            **dict.fromkeys(_LIAR_HIGH, "real"),
        },
        # LIAR's binary split puts half-true on the true side.
        {"true": "real", "false": "fake", "misleading": "real"},
    ),
    "liar-3": LabelMapping(
        "liar-3",
        ("false", "half-true", "true"),
        {
            **dict.fromkeys(_LIAR_LOW, "false"),
            "half-true": "half-true",
            **dict.fromkeys(_LIAR_HIGH, "true"),
        },
        {"true": "true", "false": "false", "misleading": "half-true"},
    ),
    "verdicts": LabelMapping(
        "verdicts",
        ("false", "misleading", "true"),
        {"false": "false", "misleading": "misleading", "true": "true"},
        {"true": "true", "false": "false", "misleading": "misleading"},
    ),
}


@dataclass(frozen=True)
class EvalItem:
    """One dataset item: ``gold`` is the mapped label, ``raw_label`` the dataset's own."""

    id: str
    text: str
    raw_label: str
    gold: str
    published: dt.date | None = None
    line: int = 0


def _date(value: object) -> dt.date | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise ValueError(f"a date must be an ISO string, not {value!r}")
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        raise ValueError(f"not an ISO date: {value!r}") from None


def _text(row: dict[str, object]) -> str:
    title = str(row.get("title") or "").strip()
    body = str(row.get("text") or "").strip()
    if body:
        return f"{title}\n\n{body}" if title and not body.startswith(title) else body
    claim = str(row.get("claim") or "").strip()
    return claim or title


def _choose_mapping(labels: set[str]) -> LabelMapping:
    """LIAR's binary split when a label only LIAR uses occurs, the engine's verdicts when
    ``misleading`` does, else ``binary``."""
    liar_only = set(LABEL_MAPPINGS["liar-binary"].gold) - set(LABEL_MAPPINGS["binary"].gold)
    if labels & liar_only:
        return LABEL_MAPPINGS["liar-binary"]
    return LABEL_MAPPINGS["verdicts" if "misleading" in labels else "binary"]


def _json_rows(path: Path) -> list[tuple[int, dict[str, object]]]:
    """The file's non-blank lines as JSON objects, each with its line number."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from None
    rows: list[tuple[int, dict[str, object]]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}, line {number}: not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise DatasetError(f"{path}, line {number}: expected a JSON object")
        rows.append((number, row))
    return rows


def _published(row: dict[str, object], where: str) -> dt.date | None:
    """The first of :data:`DATE_FIELDS` the row has, as a date (``where`` names the line)."""
    for name in DATE_FIELDS:
        if name in row:
            try:
                return _date(row[name])
            except ValueError as exc:
                raise DatasetError(f"{where}: {name}: {exc}") from None
    return None


def load_items(path: Path, labels: str = "auto") -> tuple[list[EvalItem], LabelMapping]:
    """Read every item of the JSONL file at ``path``.

    Args:
        path: one JSON object a line; blank lines are skipped.
        labels: a name from :data:`LABEL_MAPPINGS`, or ``auto``.

    Returns:
        The items in file order, and the mapping used.

    Raises:
        DatasetError: the file cannot be read, a line is not a JSON object,
            has no text or label, an unknown label, a bad date or a repeated id.
    """
    if labels != "auto" and labels not in LABEL_MAPPINGS:
        choices = ", ".join(["auto", *LABEL_MAPPINGS])
        raise DatasetError(f"unknown label mapping {labels!r}; choose one of: {choices}")
    rows = _json_rows(path)
    raw = {str(row.get("label", "")).strip().lower() for _, row in rows}
    mapping = LABEL_MAPPINGS[labels] if labels != "auto" else _choose_mapping(raw)
    items: list[EvalItem] = []
    seen: dict[str, int] = {}
    for number, row in rows:
        where = f"{path}, line {number}"
        label = str(row.get("label") or "").strip().lower()
        if not label:
            raise DatasetError(f"{where}: no label")
        if label not in mapping.gold:
            known = ", ".join(mapping.gold)
            raise DatasetError(
                f"{where}: unknown label {label!r} for mapping {mapping.name!r} ({known})"
            )
        text = _text(row)
        if not text:
            raise DatasetError(f"{where}: no text (expected 'text', 'title' or 'claim')")
        item_id = str(row.get("id", "")).strip() or f"line-{number}"
        if item_id in seen:
            raise DatasetError(f"{where}: id {item_id!r} already used on line {seen[item_id]}")
        seen[item_id] = number
        published = _published(row, where)
        items.append(
            EvalItem(item_id, text, label, mapping.gold[label], published=published, line=number)
        )
    if not items:
        raise DatasetError(f"{path}: no items")
    return items, mapping


def sample_items(items: list[EvalItem], limit: int | None, seed: int = 0) -> list[EvalItem]:
    """A fixed sample of ``limit`` items, stratified by the dataset's own label.

    Each raw label gets its share of ``limit`` (largest remainders first, ties to
    the label that sorts first), and its items are drawn with numpy's
    ``default_rng(seed)``. The sample depends only on the items, ``limit`` and
    ``seed``: not on the mode, the concurrency or what is already done. It is
    returned in file order. ``None`` (or a limit not below the size) keeps all.
    """
    if limit is None or limit >= len(items):
        return list(items)
    if limit <= 0:
        return []
    rng = np.random.default_rng(seed)
    groups: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(items):
        groups[item.raw_label].append(index)
    names = sorted(groups)
    exact = {n: limit * len(groups[n]) / len(items) for n in names}
    quota = {n: int(exact[n]) for n in names}
    short = limit - sum(quota.values())
    for n in sorted(names, key=lambda n: (-(exact[n] - quota[n]), n))[:short]:
        quota[n] += 1
    chosen: list[int] = []
    for n in names:
        order = rng.permutation(len(groups[n]))
        chosen += [groups[n][int(i)] for i in order[: quota[n]]]
    return [items[i] for i in sorted(chosen)]
