"""Evaluation datasets: reading items, the label mappings, the fixed sample."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from zofia_engine.evaluation import (
    LABEL_MAPPINGS,
    DatasetError,
    EvalItem,
    load_items,
    sample_items,
)

LIAR_SIX = ["pants-fire", "false", "barely-true", "half-true", "mostly-true", "true"]


def _write(path: Path, rows: list[dict[str, Any] | str]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_binary_items_with_title_text_and_publication_date(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "news.jsonl",
        [
            {
                "id": "a",
                "label": "fake",
                "title": "Big news",
                "text": "Body.",
                "publish_date": "2016-01-12",
            },
            {"id": "b", "label": "Real", "text": "Only a body.", "publish_date": None},
            "",
            {"id": "c", "label": "real", "text": "Dated.", "published": "2017-03-04T10:00:00"},
        ],
    )
    items, mapping = load_items(path)
    assert mapping.name == "binary" and mapping.classes == ("real", "fake")
    assert [i.id for i in items] == ["a", "b", "c"]
    assert items[0].text == "Big news\n\nBody."
    assert items[0].published == dt.date(2016, 1, 12)
    assert items[1].gold == "real" and items[1].published is None
    assert items[2].published == dt.date(2017, 3, 4) and items[2].line == 4


def test_liar_labels_map_to_binary_and_three_way(tmp_path: Path) -> None:
    rows: list[dict[str, Any] | str] = [
        {"id": n, "label": label, "claim": f"Claim {n}.", "speaker": "x"}
        for n, label in enumerate(LIAR_SIX)
    ]
    path = _write(tmp_path / "liar.jsonl", rows)
    items, mapping = load_items(path)  # auto picks the LIAR binary split
    assert mapping.name == "liar-binary"
    assert [i.gold for i in items] == ["fake", "fake", "fake", "real", "real", "real"]
    assert items[0].id == "0" and items[0].text == "Claim 0."
    three, mapping3 = load_items(path, "liar-3")
    assert [i.gold for i in three] == ["false", "false", "false", "half-true", "true", "true"]
    assert [i.raw_label for i in three] == LIAR_SIX
    # The engine says real or fake only: true and false in the three-way mapping.
    assert mapping3.predicted("real") == "true" and mapping3.predicted("fake") == "false"
    assert mapping3.predicted("undetermined") is None
    assert LABEL_MAPPINGS["binary"].predicted("fake") == "fake"


@pytest.mark.parametrize(
    ("line", "labels", "message"),
    [
        ("{not json", "auto", "line 2: not valid JSON"),
        ('["a list"]', "auto", "line 2: expected a JSON object"),
        ('{"id": "x", "label": "satire", "text": "t"}', "binary", "line 2: unknown label 'satire'"),
        ('{"id": "x", "text": "t"}', "auto", "line 2: no label"),
        ('{"id": "x", "label": "fake"}', "auto", "line 2: no text"),
        (
            '{"id": "a", "label": "fake", "text": "t"}',
            "auto",
            "line 2: id 'a' already used on line 1",
        ),
        ('{"id": "x", "label": "fake", "text": "t", "date": "soon"}', "auto", "line 2: date"),
    ],
)
def test_bad_lines_are_named_by_number(
    tmp_path: Path, line: str, labels: str, message: str
) -> None:
    path = _write(tmp_path / "bad.jsonl", [{"id": "a", "label": "real", "text": "ok"}, line])
    with pytest.raises(DatasetError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_items(path, labels)


def test_unknown_mapping_and_empty_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "empty.jsonl", [""])
    with pytest.raises(DatasetError, match="no items"):
        load_items(path)
    with pytest.raises(DatasetError, match="unknown label mapping 'five-way'"):
        load_items(path, "five-way")


def _items(counts: dict[str, int]) -> list[EvalItem]:
    items = []
    for label, count in counts.items():
        items += [EvalItem(f"{label}-{n}", "text", label, label) for n in range(count)]
    return items


def test_sample_is_fixed_by_seed_and_limit_and_stratified() -> None:
    items = _items({"fake": 118, "real": 120})
    first = sample_items(items, 30, seed=0)
    assert first == sample_items(items, 30, seed=0)
    assert first != sample_items(items, 30, seed=1)
    assert Counter(i.raw_label for i in first) == {"fake": 15, "real": 15}
    positions = [items.index(i) for i in first]
    assert positions == sorted(positions)  # file order, whatever the draw
    assert len({i.id for i in first}) == 30


def test_sample_shares_follow_the_labels_with_largest_remainders() -> None:
    items = _items({"a": 5, "b": 3, "c": 2})
    sample = sample_items(items, 5, seed=4)
    # exact shares 2.5, 1.5, 1.0 -> 2, 1, 1 and one more to the first of the tied remainders
    assert Counter(i.raw_label for i in sample) == {"a": 3, "b": 1, "c": 1}


def test_sample_without_limit_or_beyond_the_size_keeps_everything() -> None:
    items = _items({"fake": 3, "real": 2})
    assert sample_items(items, None) == items
    assert sample_items(items, 50, seed=9) == items


def test_the_public_names_are_exactly_what_the_package_exports() -> None:
    import types

    import zofia_engine.evaluation as evaluation

    defined = {
        name
        for name, value in vars(evaluation).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "annotations"  # from __future__
    }
    # Every listed name is defined here, and nothing public is left out of the list.
    assert sorted(evaluation.__all__) == sorted(defined)


@pytest.mark.parametrize(
    ("mapping", "expected"),
    [
        # misleading: not real news under the binary split, half-true's side in LIAR's.
        ("binary", {"true": "real", "false": "fake", "misleading": "fake"}),
        ("liar-binary", {"true": "real", "false": "fake", "misleading": "real"}),
        ("liar-3", {"true": "true", "false": "false", "misleading": "half-true"}),
    ],
)
def test_the_four_outcomes_score_per_mapping_and_unproven_abstains(
    mapping: str, expected: dict[str, str]
) -> None:
    labels = LABEL_MAPPINGS[mapping]
    assert {v: labels.predicted(v) for v in expected} == expected
    # The engine abstained: the item is not covered, whatever the mapping.
    for verdict in ("unproven", "undetermined", "no_claim", "satire", "scam"):
        assert labels.predicted(verdict) is None, verdict
    # Reports stored before the four outcomes still score as they did.
    assert labels.predicted("real") == expected["true"]
    assert labels.predicted("fake") == expected["false"]
