"""RADAR's threshold search (App. C) on hand-made cached scores, and the contextual
calibration measurement: pure functions, every expected value worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zofia_engine.evaluation.calibration import (
    ItemScores,
    RoundScore,
    calibration_effect,
    grid_search,
    read_scores,
)
from zofia_engine.evaluation.dataset import LABEL_MAPPINGS

BINARY = LABEL_MAPPINGS["binary"]


def _item(
    id_: str, gold: str, rounds: list[tuple[float, float, str]], final: str
) -> dict[str, Any]:
    return {
        "id": id_,
        "gold": gold,
        "rounds": [
            {"round": n, "stop_margin": s, "label_confidence": c, "outcome": o}
            for n, (s, c, o) in enumerate(rounds, 1)
        ],
        "final": final,
    }


# A stops right at round 1 once s ≥ τs and c ≥ τv hold (s 0.5, c 0.9).
# B is wrong at round 1 (s 0.2, c 0.8) and right at round 2 (s 0.6, c 0.8).
# C is wrong at round 1 (s -0.5, c 0.95) and right at the end.
ITEMS = [
    _item("A", "fake", [(0.5, 0.9, "false"), (0.9, 0.9, "false")], "false"),
    _item("B", "real", [(0.2, 0.8, "false"), (0.6, 0.8, "true")], "true"),
    _item("C", "real", [(-0.5, 0.95, "false"), (-0.4, 0.95, "false")], "true"),
]


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "scores.jsonl"
    lines = [json.dumps(item) for item in ITEMS]
    stale = _item("A", "fake", [(0.0, 0.0, "true")], "true")  # an earlier run's line
    path.write_text("\n".join([json.dumps(stale), *lines]) + "\n", encoding="utf-8")
    return path


def test_the_grid_finds_the_pair_that_is_right_on_every_item_in_fewest_rounds(
    tmp_path: Path,
) -> None:
    items = read_scores(_file(tmp_path))
    assert [i.id for i in items] == ["A", "B", "C"] and items[0].rounds[0].stop_margin == 0.5
    best, points = grid_search(items, BINARY)
    # All three right needs 0.2 < τs ≤ 0.5 (B must not stop at round 1, A must) and
    # τv ≤ 0.8 (B stops at round 2); then A takes 1 round, B 2 and C 3 (its final).
    # Among the pairs that do that, the strictest: τs 0.5, τv 0.8.
    assert (best.stop_margin, best.verdict_confidence) == (0.5, 0.8)
    assert best.accuracy == 1.0 and best.mean_rounds == pytest.approx(2.0)
    assert best.stopped_early == 2
    assert len(points) == 41 * 21 and points[0] == best  # listed best first
    never = next(p for p in points if p.stop_margin == 1.0 and p.verdict_confidence == 1.0)
    assert never.accuracy == 1.0 and never.mean_rounds == 3.0  # all to the end: right, slower
    eager = next(p for p in points if p.stop_margin == -1.0 and p.verdict_confidence == 0.0)
    assert eager.accuracy == pytest.approx(1 / 3) and eager.mean_rounds == 1.0


def test_a_small_grid_of_hand_picked_pairs() -> None:
    items = [ItemScores.model_validate(item) for item in ITEMS]
    best, points = grid_search(items, BINARY, tau_s=(-0.6, 0.0, 0.3, 0.7), tau_v=(0.5, 0.85))
    by_pair = {(p.stop_margin, p.verdict_confidence): p for p in points}
    assert (best.stop_margin, best.verdict_confidence) == (0.3, 0.5)
    assert by_pair[(-0.6, 0.5)].accuracy == pytest.approx(1 / 3)  # B and C stop wrong at 1
    # B is never sure enough and C's margin never high enough: both go to the end.
    assert by_pair[(0.0, 0.85)].mean_rounds == pytest.approx((1 + 3 + 3) / 3)
    assert by_pair[(0.0, 0.85)].accuracy == 1.0
    assert by_pair[(0.3, 0.5)].mean_rounds == pytest.approx((1 + 2 + 3) / 3)


def test_missing_probabilities_never_stop_early() -> None:
    item = ItemScores(
        id="x",
        gold="real",
        rounds=[RoundScore(round=1, stop_margin=None, label_confidence=None, outcome="false")],
        final="true",
    )
    best, _ = grid_search([item], BINARY, tau_s=(-1.0,), tau_v=(0.0,))
    assert best.accuracy == 1.0 and best.stopped_early == 0 and best.mean_rounds == 2


def test_contextual_calibration_is_measured_by_calibration_error() -> None:
    # The judge says "false" with 0.9 on everything; its prior on a content-free post is
    # "false" 0.9 too, so its real confidence is far lower than it says.
    def final(gold: str, p_false: float) -> ItemScores:
        rest = (1 - p_false) / 3
        probabilities = {"true": rest, "false": p_false, "misleading": rest, "unproven": rest}
        return ItemScores(
            id=gold + str(p_false),
            gold=gold,
            rounds=[],
            final="false",
            final_probabilities=probabilities,
        )

    items = [final("fake", 0.9), final("real", 0.9), final("real", 0.9), final("fake", 0.95)]
    prior = {"true": 0.04, "false": 0.9, "misleading": 0.03, "unproven": 0.03}
    before, after = calibration_effect(items, prior, BINARY)
    assert before is not None and after is not None
    # As given: all four in the top bin, mean confidence 0.9125, half of them right.
    assert before == pytest.approx(0.9125 - 0.5)
    assert after < before  # the correction brings the stated confidence nearer the truth
