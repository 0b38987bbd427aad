"""Evaluation metrics against confusion matrices computed by hand."""

from __future__ import annotations

import pytest

from zofia_engine.evaluation import (
    accuracy,
    bootstrap_interval,
    class_scores,
    confusion_matrix,
    macro_f1,
    score,
)

# 7 items. By hand:
#   gold real (3): predicted real, fake, none
#   gold fake (4): predicted real, fake, fake, fake
#   real: tp 1, predicted 2, support 3 -> P 1/2, R 1/3, F1 2/(2+3) = 0.4
#   fake: tp 3, predicted 4, support 4 -> P 3/4, R 3/4, F1 6/8 = 0.75
#   accuracy 4/7, macro-F1 (0.4 + 0.75) / 2 = 0.575
GOLD = ["real", "real", "real", "fake", "fake", "fake", "fake"]
PRED: list[str | None] = ["real", "fake", None, "real", "fake", "fake", "fake"]


def test_confusion_matrix_counts_pairs_and_puts_no_answer_in_none() -> None:
    assert confusion_matrix(GOLD, PRED, ["real", "fake"]) == {
        "real": {"real": 1, "fake": 1, "none": 1},
        "fake": {"real": 1, "fake": 3, "none": 0},
    }


def test_scores_match_the_hand_computed_matrix() -> None:
    assert accuracy(GOLD, PRED) == pytest.approx(4 / 7)
    scores = class_scores(GOLD, PRED, ["real", "fake"])
    assert scores["real"].precision == pytest.approx(0.5)
    assert scores["real"].recall == pytest.approx(1 / 3)
    assert scores["real"].f1 == pytest.approx(0.4)
    assert scores["real"].support == 3
    assert scores["fake"].precision == pytest.approx(0.75)
    assert scores["fake"].recall == pytest.approx(0.75)
    assert scores["fake"].f1 == pytest.approx(0.75)
    assert macro_f1(GOLD, PRED, ["real", "fake"]) == pytest.approx(0.575)

    metrics = score(GOLD, PRED, ["real", "fake"], resamples=200, seed=3)
    assert metrics.items == 7
    assert metrics.accuracy == pytest.approx(4 / 7)
    assert metrics.macro_f1 == pytest.approx(0.575)
    assert metrics.confusion["real"]["none"] == 1
    assert metrics.accuracy_ci is not None and metrics.macro_f1_ci is not None
    assert metrics.accuracy_ci.low <= 4 / 7 <= metrics.accuracy_ci.high
    assert metrics.macro_f1_ci.resamples == 200


def test_three_way_scoring_with_a_class_the_engine_never_says() -> None:
    # LIAR three-way: the engine says real -> true, fake -> false, never half-true.
    gold = ["false", "half-true", "true", "true", "false", "half-true"]
    pred: list[str | None] = ["false", "false", "true", "false", "false", "true"]
    classes = ["false", "half-true", "true"]
    # false: tp 2, predicted 4, support 2 -> F1 4/6; half-true: F1 0; true: tp 1, predicted 2,
    # support 2 -> F1 2/4. Macro over the three classes present in gold: (2/3 + 0 + 1/2) / 3.
    assert confusion_matrix(gold, pred, classes)["half-true"] == {
        "false": 1,
        "half-true": 0,
        "true": 1,
        "none": 0,
    }
    assert accuracy(gold, pred) == pytest.approx(3 / 6)
    assert macro_f1(gold, pred, classes) == pytest.approx(7 / 18)


def test_macro_f1_leaves_out_classes_neither_seen_nor_said() -> None:
    gold = ["false", "true"]
    pred: list[str | None] = ["false", "false"]
    # false: F1 2/3, true: F1 0; half-true appears nowhere and is not averaged.
    assert macro_f1(gold, pred, ["false", "half-true", "true"]) == pytest.approx(1 / 3)


def test_perfect_and_empty_runs() -> None:
    gold = ["real", "fake", "fake"]
    assert accuracy(gold, list(gold)) == 1.0 and macro_f1(gold, list(gold), ["real", "fake"]) == 1
    interval = bootstrap_interval(gold, list(gold), accuracy, resamples=50)
    assert interval is not None and interval.low == interval.high == 1.0
    assert accuracy([], []) == 0.0 and macro_f1([], [], ["real", "fake"]) == 0.0
    assert bootstrap_interval([], [], accuracy) is None
    assert bootstrap_interval(gold, list(gold), accuracy, resamples=0) is None
    empty = score([], [], ["real", "fake"])
    assert empty.items == 0 and empty.accuracy_ci is None


def test_bootstrap_is_reproducible_with_its_seed() -> None:
    first = bootstrap_interval(GOLD, PRED, accuracy, resamples=300, seed=7)
    again = bootstrap_interval(GOLD, PRED, accuracy, resamples=300, seed=7)
    other = bootstrap_interval(GOLD, PRED, accuracy, resamples=300, seed=8)
    assert first == again
    assert first is not None and other is not None
    assert 0.0 <= first.low < 4 / 7 < first.high <= 1.0
    assert first.level == 0.95


def test_abstention_scores_by_hand() -> None:
    from zofia_engine.evaluation.abstention import Judged, selective

    # 6 items; two abstained (unproven), one of them skipped by triage.
    items = [
        Judged("real", "real", 0.9),  # right, sure
        Judged("fake", "real", 0.8),  # wrong, sure: confidently wrong
        Judged("fake", "fake", 0.55),  # right, unsure
        Judged("real", "fake", 0.6),  # wrong, unsure: not "confidently" wrong
        Judged("real", None, None),
        Judged("fake", None, None, skipped=True),
    ]
    sel = selective(items, ["real", "fake"])
    assert (sel.items, sel.covered) == (6, 4) and sel.coverage == pytest.approx(4 / 6)
    assert sel.covered_accuracy == 0.5
    # real: tp 1, said 2, support 2 -> F1 0.5; fake: tp 1, said 2, support 2 -> F1 0.5
    assert sel.covered_macro_f1 == pytest.approx(0.5)
    assert sel.confidently_wrong == pytest.approx(1 / 6)
    assert sel.triage_skipped == 1
    curve = {p.threshold: (p.coverage, p.risk) for p in sel.risk_coverage}
    assert curve[0.0][0] == pytest.approx(4 / 6) and curve[0.0][1] == 0.5
    assert curve[0.7][0] == pytest.approx(2 / 6) and curve[0.7][1] == 0.5  # 0.9 right, 0.8 wrong
    assert curve[0.9][0] == pytest.approx(1 / 6) and curve[0.9][1] == 0.0
    bins = {(b.low, b.high): b for b in sel.reliability}
    top = bins[(0.8, 1.0)]
    assert top.count == 2 and top.confidence == pytest.approx(0.85) and top.accuracy == 0.5
    middle = bins[(0.4, 0.6)]
    assert middle.count == 1 and middle.accuracy == 1.0
    # ECE: (2·|0.85-0.5| + 1·|0.55-1| + 1·|0.6-0|) / 4
    assert sel.ece == pytest.approx((2 * 0.35 + 0.45 + 0.6) / 4)
    nothing = selective([Judged("real", None, None)], ["real", "fake"])
    assert nothing.coverage == 0 and nothing.covered_accuracy is None and nothing.ece is None
