"""Stage-1 algorithms checked against hand-computed cases (paper eq. 2-5, Algorithms 2-3)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from zofia_engine.retrieval.entities import (
    EntityUnit,
    aggregate_units,
    clean_units,
    merge_variants,
    normalize_name,
    select_by_dynamic_threshold,
)
from zofia_engine.retrieval.keywords import annealed_lambda, select_keywords, similarity_matrix
from zofia_engine.retrieval.ner.base import TaggedToken
from zofia_engine.retrieval.salience import hierarchical_salience, local_context
from zofia_engine.stage1_settings import KeywordSettings


def unit(text: str, confidence: float, label: str = "PER", start: int = 0) -> EntityUnit:
    return EntityUnit(text, label, start, start + len(text), confidence, len(text.split()))


# --- eq. 2: aggregation of consecutive tokens ------------------------------------


def test_aggregation_averages_token_confidences() -> None:
    text = "Joe Biden met Angela Merkel in Berlin."
    tokens = [
        TaggedToken(0, 0, 3, "PER", True, 0.9),
        TaggedToken(1, 4, 9, "PER", False, 0.7),
        TaggedToken(3, 14, 20, "PER", True, 0.99),
        TaggedToken(4, 21, 27, "PER", False, 0.95),
        TaggedToken(6, 31, 37, "LOC", True, 0.6),
    ]
    units = aggregate_units(tokens, text)
    assert [u.text for u in units] == ["Joe Biden", "Angela Merkel", "Berlin"]
    assert units[0].confidence == pytest.approx((0.9 + 0.7) / 2)
    assert units[1].confidence == pytest.approx((0.99 + 0.95) / 2)
    assert units[2].confidence == pytest.approx(0.6)
    assert [u.n_tokens for u in units] == [2, 2, 1]


def test_aggregation_splits_on_new_entity_label_or_gap() -> None:
    text = "Paris Hilton Washington"
    tokens = [
        TaggedToken(0, 0, 5, "LOC", True, 0.5),
        TaggedToken(1, 6, 12, "PER", False, 0.8),  # label change: new unit
        TaggedToken(2, 13, 23, "LOC", True, 0.9),  # B- with a gap: new unit
    ]
    assert [u.text for u in aggregate_units(tokens, text)] == ["Paris", "Hilton", "Washington"]


def test_aggregation_glues_word_pieces_even_when_tagged_begin() -> None:
    # BERT sometimes tags a word piece B-: it still belongs to the word before it.
    text = "Zelenskyy spoke"
    tokens = [
        TaggedToken(0, 0, 3, "PER", True, 0.8),
        TaggedToken(1, 3, 6, "PER", True, 0.6),
        TaggedToken(2, 6, 9, "PER", False, 0.4),
    ]
    units = aggregate_units(tokens, text)
    assert len(units) == 1 and units[0].text == "Zelenskyy"
    assert units[0].confidence == pytest.approx(0.6)


def test_aggregation_of_nothing_is_nothing() -> None:
    assert aggregate_units([], "no entities here") == []


# --- Algorithm 2: dynamic threshold ------------------------------------------------


def test_threshold_keeps_initial_value_when_enough_pass() -> None:
    units = [unit("A", 0.95), unit("B", 0.81), unit("C", 0.5)]
    kept, tau = select_by_dynamic_threshold(units, initial=0.8, step=0.1, min_entities=1)
    assert tau == pytest.approx(0.8)
    assert [u.text for u in kept] == ["A", "B"]


def test_threshold_steps_down_until_min_entities() -> None:
    units = [unit("A", 0.75), unit("B", 0.55), unit("C", 0.52), unit("D", 0.2)]
    # 0.8: none; 0.7: A; 0.6: A; 0.5: A, B, C -> 3 >= 3
    kept, tau = select_by_dynamic_threshold(units, initial=0.8, step=0.1, min_entities=3)
    assert tau == pytest.approx(0.5)
    assert [u.text for u in kept] == ["A", "B", "C"]


def test_threshold_never_goes_below_floor() -> None:
    units = [unit("A", 0.05), unit("B", 0.12)]
    kept, tau = select_by_dynamic_threshold(units, initial=0.8, step=0.1, floor=0.1)
    assert tau == pytest.approx(0.1)
    assert [u.text for u in kept] == ["B"]
    kept, tau = select_by_dynamic_threshold([unit("A", 0.05)], floor=0.1)
    assert kept == [] and tau == pytest.approx(0.1)


def test_threshold_on_empty_ner_returns_empty_set() -> None:
    assert select_by_dynamic_threshold([]) == ([], None)


def test_threshold_counts_distinct_names() -> None:
    units = [unit("A", 0.9), unit("A", 0.9, start=10), unit("B", 0.65)]
    kept, tau = select_by_dynamic_threshold(units, min_entities=2)
    assert tau == pytest.approx(0.6)
    assert {u.text for u in kept} == {"A", "B"}


# --- variant merging and cleaning --------------------------------------------------


def test_person_surname_merges_into_the_single_full_name() -> None:
    text = "Joe Biden spoke. Biden left. The White House and White House staff."
    units = [
        EntityUnit("Joe Biden", "PER", 0, 9, 0.9, 2),
        EntityUnit("Biden", "PER", 17, 22, 0.7, 1),
        EntityUnit("The White House", "LOC", 29, 44, 0.8, 3),
        EntityUnit("White House", "LOC", 49, 60, 0.95, 2),
    ]
    sentences = [(0, 16), (17, 28), (29, len(text))]
    entities = merge_variants(units, sentences)
    assert [e.text for e in entities] == ["Joe Biden", "The White House"]
    biden = entities[0]
    assert biden.variants == ["Biden"]
    assert [m.sentence for m in biden.mentions] == [0, 1]
    assert biden.confidence == pytest.approx(0.9)
    assert entities[1].confidence == pytest.approx(0.95)


def test_ambiguous_surname_stays_apart() -> None:
    units = [
        EntityUnit("Bill Clinton", "PER", 0, 12, 0.9, 2),
        EntityUnit("Hillary Clinton", "PER", 20, 35, 0.9, 2),
        EntityUnit("Clinton", "PER", 40, 47, 0.9, 1),
    ]
    names = [e.text for e in merge_variants(units, [(0, 50)])]
    assert sorted(names) == ["Bill Clinton", "Clinton", "Hillary Clinton"]


def test_normalize_name() -> None:
    assert normalize_name("The  Pentagon’s") == "pentagon"
    assert normalize_name("Zürich") == "zurich"
    assert normalize_name("U.S.") == "u s"


def test_clean_units_trims_and_drops_tagging_slips() -> None:
    text = '"Apple" said: Trump Shocks Hollywood-, Speaks Out Against Obama. Bourdain’s show'
    units = [
        EntityUnit('"Apple"', "ORG", 0, 7, 0.9, 3),
        EntityUnit("Trump Shocks Hollywood-, Speaks Out Against Obama", "PER", 14, 63, 0.9, 8),
        EntityUnit("Bourdain’s", "PER", 65, 75, 0.9, 2),
    ]
    cleaned = clean_units(units, text)
    assert [u.text for u in cleaned] == ["Apple", "Bourdain"]
    assert text[cleaned[0].start : cleaned[0].end] == "Apple"


# --- eq. 3: hierarchical salience --------------------------------------------------


def test_hierarchical_salience_is_product_of_two_cosines() -> None:
    v_entity = np.array([1.0, 0.0])
    v_context = np.array([1.0, 1.0])
    v_text = np.array([0.0, 2.0])
    local, global_, hier = hierarchical_salience(v_entity, v_context, v_text)
    assert local == pytest.approx(1 / math.sqrt(2))
    assert global_ == pytest.approx(1 / math.sqrt(2))
    assert hier == pytest.approx(0.5)


def test_local_context_is_previous_own_and_next_sentence() -> None:
    sentences = ["S0.", "S1.", "S2.", "S3."]
    assert local_context(sentences, 0) == "S0. S1."
    assert local_context(sentences, 2) == "S1. S2. S3."
    assert local_context(sentences, 3) == "S2. S3."


# --- eq. 5: annealed lambda ---------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (0, 1 - math.exp(-2.5)),  # 0.9179
        (1, 1 - math.exp(-2.2)),  # 0.8892
        (5, 1 - math.exp(-1.0)),  # 0.6321
        (8, 1 - math.exp(-0.1)),  # 0.0952 -> floored
        (12, 0.1),
    ],
)
def test_annealed_lambda_schedule(k: int, expected: float) -> None:
    assert annealed_lambda(k) == pytest.approx(max(0.1, expected))


def test_annealed_lambda_is_monotone_and_floored() -> None:
    values = [annealed_lambda(k) for k in range(20)]
    assert all(a >= b for a, b in itertools.pairwise(values))
    assert min(values) == pytest.approx(0.1)
    assert annealed_lambda(8) == pytest.approx(0.1)


# --- Algorithm 3: SC-MMR -------------------------------------------------------------


def test_sc_mmr_order_and_gamma_stop_by_hand() -> None:
    salience = [0.5, 0.45, 0.4, 0.1]
    sim = np.array(
        [
            [1.0, 0.9, 0.2, 0.1],
            [0.9, 1.0, 0.3, 0.1],
            [0.2, 0.3, 1.0, 0.1],
            [0.1, 0.1, 0.1, 1.0],
        ]
    )
    picks = select_keywords(salience, sim, KeywordSettings(gamma=0.5))
    lam0, lam1, lam2 = annealed_lambda(0), annealed_lambda(1), annealed_lambda(2)
    # Seed: highest salience, scored lam0 * S = 0.45896.
    assert picks[0].index == 0
    assert picks[0].mmr == pytest.approx(lam0 * 0.5)
    # Round k=1: candidate 1: lam1*.45 - (1-lam1)*.9 = 0.30017; candidate 2: lam1*.4 - (1-lam1)*.2
    # = 0.33353; candidate 3: lam1*.1 - (1-lam1)*.1 = 0.07784. Best is 2 (diversity wins).
    assert picks[1].index == 2
    assert picks[1].mmr == pytest.approx(lam1 * 0.4 - (1 - lam1) * 0.2)
    assert picks[1].lambda_k == pytest.approx(lam1)
    # Round k=2: candidate 1: lam2*.45 - (1-lam2)*.9 = 0.2701 > 0.5 * 0.33353: taken.
    assert picks[2].index == 1
    assert picks[2].mmr == pytest.approx(lam2 * 0.45 - (1 - lam2) * 0.9)
    # Round k=3: candidate 3 scores about 0.0625 <= 0.5 * 0.2701: stop.
    assert [p.index for p in picks] == [0, 2, 1]


def test_sc_mmr_with_paper_listing_reference_of_one() -> None:
    salience = [0.5, 0.45, 0.4, 0.1]
    sim = np.eye(4)
    # The listing's MMR_prev = 1.0: the best next score (lam1 * 0.45 = 0.40) is <= 0.5.
    picks = select_keywords(salience, sim, KeywordSettings(initial_reference="one"))
    assert [p.index for p in picks] == [0]
    # With high saliences the same rule lets more through.
    picks = select_keywords([0.9, 0.8, 0.7], np.eye(3), KeywordSettings(initial_reference="one"))
    assert [p.index for p in picks] == [0, 1, 2]


def test_sc_mmr_drops_a_coreferent_duplicate() -> None:
    # A near-duplicate of the seed (cosine 0.97) with more salience than a distinct
    # entity is still ranked after it: k=1: 0.8892*.42 - 0.1108*.97 = 0.2660 for the
    # duplicate vs 0.8892*.36 - 0.1108*.2 = 0.2979 for the distinct one.
    salience = [0.6, 0.42, 0.36]
    sim = np.array([[1.0, 0.97, 0.2], [0.97, 1.0, 0.2], [0.2, 0.2, 1.0]])
    picks = select_keywords(salience, sim, KeywordSettings(gamma=0.5))
    assert [p.index for p in picks] == [0, 2, 1]
    # Early on lambda is near 0.9, so a duplicate far more salient still comes second.
    picks = select_keywords([0.6, 0.58, 0.35], sim, KeywordSettings(gamma=0.5))
    assert [p.index for p in picks][:2] == [0, 1]


def test_sc_mmr_cap_and_trivial_inputs() -> None:
    assert select_keywords([], np.zeros((0, 0))) == []
    assert [p.index for p in select_keywords([0.3], np.eye(1))] == [0]
    picks = select_keywords([0.9, 0.8, 0.7, 0.6], np.eye(4), KeywordSettings(max_keywords=2))
    assert [p.index for p in picks] == [0, 1]


def test_similarity_matrix_is_cosine() -> None:
    vectors = np.array([[3.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    sim = similarity_matrix(vectors)
    assert sim[0, 1] == pytest.approx(1 / math.sqrt(2))
    assert sim[0, 0] == pytest.approx(1.0)
    assert sim[2, 0] == 0.0
