"""NearDuplicateIndex: cosine search with a threshold, growth, removal, and the real encoder."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

from bots.service.near import NearDuplicateIndex, canonical_text, same_particulars
from zofia_engine.encoder import SentenceTransformerEncoder

pytest_plugins = ["tests.peers.fixtures.model_fixtures"]

DIM = 384


def unit_rows(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    result: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return result


def at_cosine(base: np.ndarray, cosine: float, seed: int = 1) -> np.ndarray:
    """A unit vector whose cosine with the unit vector ``base`` is exactly ``cosine``."""
    rng = np.random.default_rng(seed)
    other = rng.standard_normal(int(base.shape[0]))
    other -= other.dot(base) * base
    other /= np.linalg.norm(other)
    result: np.ndarray = cosine * base.astype(np.float64) + np.sqrt(1 - cosine**2) * other
    return result


def loaded(n: int = 50, seed: int = 0) -> tuple[NearDuplicateIndex, np.ndarray]:
    rows = unit_rows(n, seed)
    index = NearDuplicateIndex(DIM)
    index.load([f"c{i}" for i in range(n)], rows)
    return index, rows


def test_exact_duplicate_is_found_with_score_one() -> None:
    index, rows = loaded()
    match = index.nearest(rows[17], threshold=0.95)
    assert match is not None
    assert match[0] == "c17"
    assert match[1] == pytest.approx(1.0, abs=1e-5)
    assert match[1] <= 1.0
    # An exact duplicate also meets the strictest threshold despite float32 rounding.
    assert index.nearest(rows[17], threshold=1.0) == pytest.approx(("c17", 1.0), abs=1e-5)


def test_rows_and_queries_are_normalised() -> None:
    index, rows = loaded()
    match = index.nearest(rows[3] * 7.5, threshold=0.99)
    assert match is not None and match[0] == "c3"
    assert match[1] == pytest.approx(1.0, abs=1e-5)
    scaled = NearDuplicateIndex(DIM)
    scaled.load(["a", "b"], rows[:2] * np.array([[3.0], [0.01]], dtype=np.float32))
    assert scaled.nearest(rows[1], threshold=0.99) == pytest.approx(("b", 1.0), abs=1e-5)


def test_threshold_is_respected() -> None:
    index, rows = loaded()
    just_below = at_cosine(rows[5], 0.949)
    just_above = at_cosine(rows[5], 0.951)
    assert index.nearest(just_below, threshold=0.95) is None
    match = index.nearest(just_above, threshold=0.95)
    assert match is not None and match[0] == "c5"
    assert match[1] == pytest.approx(0.951, abs=1e-4)
    below = index.nearest(just_below, threshold=0.9)
    assert below is not None and below[1] == pytest.approx(0.949, abs=1e-4)


def test_threshold_out_of_range_is_refused() -> None:
    index, rows = loaded()
    for bad in (0.0, -0.5, 1.01):
        with pytest.raises(ValueError, match="threshold"):
            index.nearest(rows[0], threshold=bad)


def test_best_match_wins() -> None:
    index = NearDuplicateIndex(DIM)
    base = unit_rows(1, seed=3)[0]
    index.add("far", at_cosine(base, 0.96, seed=4))
    index.add("close", at_cosine(base, 0.99, seed=5))
    index.add("unrelated", unit_rows(1, seed=6)[0])
    assert index.nearest(base, threshold=0.95) == pytest.approx(("close", 0.99), abs=1e-4)


def test_exclude_skips_ids() -> None:
    index = NearDuplicateIndex(DIM)
    base = unit_rows(1, seed=3)[0]
    index.add("self", base)
    index.add("repeat", at_cosine(base, 0.97))
    assert index.nearest(base, threshold=0.95) == pytest.approx(("self", 1.0), abs=1e-5)
    match = index.nearest(base, threshold=0.95, exclude={"self", "not-stored"})
    assert match == pytest.approx(("repeat", 0.97), abs=1e-4)
    assert index.nearest(base, threshold=0.95, exclude={"self", "repeat"}) is None
    assert len(index) == 2  # excluding does not remove


def test_add_after_load() -> None:
    index, rows = loaded(10)
    extra = unit_rows(3, seed=9)
    for i, row in enumerate(extra):
        index.add(f"new{i}", row)
    assert len(index) == 13
    assert index.nearest(extra[2], threshold=0.99) == pytest.approx(("new2", 1.0), abs=1e-5)
    assert index.nearest(rows[4], threshold=0.99) == pytest.approx(("c4", 1.0), abs=1e-5)


def test_add_existing_id_replaces_its_vector() -> None:
    index, rows = loaded(5)
    replacement = unit_rows(1, seed=11)[0]
    index.add("c2", replacement)
    assert len(index) == 5
    assert index.nearest(rows[2], threshold=0.9) is None
    assert index.nearest(replacement, threshold=0.99) == pytest.approx(("c2", 1.0), abs=1e-5)


def test_capacity_growth_keeps_earlier_rows() -> None:
    rows = unit_rows(1000, seed=2)
    index = NearDuplicateIndex(DIM)
    capacities = set()
    for i, row in enumerate(rows):
        index.add(f"c{i}", row)
        capacities.add(index.capacity)
    assert len(index) == 1000
    assert len(capacities) > 3  # it grew several times ...
    assert index.capacity < 2 * 1000 + 64  # ... by doubling, not row by row
    for i, row in enumerate(rows):
        match = index.nearest(row, threshold=0.99)
        assert match is not None and match[0] == f"c{i}", i
        assert match[1] == pytest.approx(1.0, abs=1e-5)


def test_remove() -> None:
    index, rows = loaded(20)
    assert index.remove(["c0", "c7", "c19", "missing"]) == 3
    assert index.remove(["c7"]) == 0
    assert len(index) == 17
    for gone in (0, 7, 19):
        assert f"c{gone}" not in index
        assert index.nearest(rows[gone], threshold=0.9) is None
    # Swap-remove moved rows around: every survivor is still found under its own id.
    for i in set(range(20)) - {0, 7, 19}:
        assert index.nearest(rows[i], threshold=0.99) == pytest.approx((f"c{i}", 1.0), abs=1e-5)
    assert index.remove("c3") == 1  # a single id as a plain string
    index.add("c0", rows[0])
    assert index.nearest(rows[0], threshold=0.99) == pytest.approx(("c0", 1.0), abs=1e-5)
    assert index.remove(f"c{i}" for i in range(20)) == 17
    assert len(index) == 0
    assert index.nearest(rows[1], threshold=0.5) is None


def test_empty_index_returns_none() -> None:
    index = NearDuplicateIndex(DIM)
    assert len(index) == 0
    assert index.nearest(unit_rows(1)[0], threshold=0.5) is None
    index.load([], np.zeros((0, DIM), dtype=np.float32))
    assert index.nearest(unit_rows(1)[0], threshold=0.5) is None


def test_load_replaces_contents() -> None:
    index, rows = loaded(10)
    fresh = unit_rows(2, seed=42)
    index.load(["x", "y"], fresh)
    assert len(index) == 2
    assert "c1" not in index
    assert index.nearest(rows[1], threshold=0.9) is None
    assert index.nearest(fresh[1], threshold=0.99) == pytest.approx(("y", 1.0), abs=1e-5)


def test_zero_vectors_give_no_nan_and_no_match() -> None:
    index, _ = loaded(10)
    with np.errstate(all="raise"):  # no division by zero anywhere
        assert index.nearest(np.zeros(DIM, dtype=np.float32), threshold=0.1) is None
        index.add("zero", np.zeros(DIM, dtype=np.float32))
        zeros = NearDuplicateIndex(DIM)
        zeros.load(["z1", "z2"], np.zeros((2, DIM), dtype=np.float32))
    assert len(index) == 11
    # A stored zero vector scores 0 against anything, so it never meets a threshold.
    assert zeros.nearest(unit_rows(1)[0], threshold=0.01) is None
    assert zeros.nearest(np.zeros(DIM), threshold=0.01) is None


def test_wrong_dimension_is_a_clear_value_error() -> None:
    index, _ = loaded(5)
    with pytest.raises(ValueError, match=r"expected a vector of dimension 384, got shape \(128,\)"):
        index.nearest(np.ones(128, dtype=np.float32), threshold=0.9)
    with pytest.raises(ValueError, match="dimension 384"):
        index.add("bad", np.ones(385, dtype=np.float32))
    with pytest.raises(ValueError, match=r"shape \(n, 384\), got shape \(3, 10\)"):
        index.load(["a", "b", "c"], np.ones((3, 10), dtype=np.float32))
    with pytest.raises(ValueError, match="2 ids for 3 vectors"):
        index.load(["a", "b"], unit_rows(3))
    with pytest.raises(ValueError, match="unique"):
        index.load(["a", "a"], unit_rows(2))
    assert len(index) == 5  # a refused load leaves the contents alone
    # One encoder row of shape (1, dim) is accepted as a vector.
    assert index.nearest(unit_rows(5)[2][None, :], threshold=0.99) is not None


def test_nan_is_refused() -> None:
    index, _ = loaded(5)
    bad = np.full(DIM, np.nan, dtype=np.float32)
    with pytest.raises(ValueError, match="NaN"):
        index.nearest(bad, threshold=0.9)
    with pytest.raises(ValueError, match="NaN"):
        index.add("bad", bad)


def test_concurrent_adds_and_searches() -> None:
    rows = unit_rows(800, seed=5)
    index = NearDuplicateIndex(DIM)
    errors: list[BaseException] = []

    def writer(part: int) -> None:
        try:
            for i in range(part, 800, 4):
                index.add(f"c{i}", rows[i])
                index.nearest(rows[i], threshold=0.99)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(p,)) for p in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(index) == 800
    for i in range(0, 800, 37):
        assert index.nearest(rows[i], threshold=0.99) == pytest.approx((f"c{i}", 1.0), abs=1e-5)


# --- canonical_text and same_particulars --------------------------------------------------


def test_canonical_text_strips_forward_decorations() -> None:
    post = "Senator Warren voted against the bill. It passed anyway."
    forwards = [
        "Fwd: " + post,
        "FW: fwd: " + post,
        "Forwarded from Patriot News 24/7:\n" + post,
        "Forwarded from Jim\n" + post,
        "🚨 " + post.replace("bill.", "bill. 😡👇🏽") + " 🇺🇸",
        post + "\n\n#share #truth",
        post + " #share #WakeUp!",
        "  SENATOR  warren voted against the bill.\n\nIt passed   anyway. ",
    ]
    assert {canonical_text(text) for text in forwards} == {canonical_text(post)}
    assert canonical_text(post) == "senator warren voted against the bill. it passed anyway."


def test_canonical_text_keeps_content() -> None:
    assert canonical_text("#Biden said 3 words") == "biden said 3 words"
    assert canonical_text("Taxes rose 10% in 2019, not 5%") == "taxes rose 10% in 2019, not 5%"
    assert canonical_text("Forwarded from my aunt: it is true") == "it is true"
    assert canonical_text("") == ""


def test_same_particulars_allows_forward_edits() -> None:
    post = "The governor said 40 schools will not reopen in 2021. Parents were told on Monday."
    assert same_particulars(post, "Fwd: " + post + "\n\nPlease share, the media won't say it.")
    assert same_particulars(post, post.split(". ")[0])  # the tail cut
    assert same_particulars(post, post.replace("said ", "said that ", 1))
    assert same_particulars(post, "BREAKING 2021 UPDATE\n" + post)  # a run added at the start


def test_same_particulars_catches_negation_and_number_edits() -> None:
    post = "The governor said 40 schools will not reopen in 2021."
    assert not same_particulars(post, post.replace(" not", ""))
    assert not same_particulars(post, post.replace("40", "400"))
    assert not same_particulars(post, post.replace("2021", "2022"))
    assert not same_particulars("Obama is a Muslim.", "Fwd: Obama is never a Muslim.")
    assert not same_particulars("Canada made more jobs than we did.", "... than we did not.")
    assert not same_particulars("He won the vote", "He didn't win the vote")


def _long_post(words: int = 8000) -> list[str]:
    """A long post of everyday words, not periodic (as no real post is)."""
    rng = random.Random(3)
    vocabulary = "the council said members city approved plan people river bridge mayor"
    return [rng.choice(vocabulary.split()) for _ in range(words)]


@pytest.mark.parametrize("at", [50, 1499, 1501, 4000, 7950])
def test_a_long_post_s_edit_is_caught_anywhere(at: int) -> None:
    words = _long_post()
    post = " ".join(words)
    for particular in ("not", "42"):
        edited = " ".join([*words[:at], particular, *words[at:]])
        assert not same_particulars(post, edited)
        assert not same_particulars(post, "Fwd: from Ann on Monday: " + edited)


def test_a_long_post_s_forward_edits_are_allowed() -> None:
    words = _long_post()
    post = " ".join(words)
    assert same_particulars(post, "Fwd: forwarded from Ann on 12 May: " + post)
    assert same_particulars(post, " ".join(words[:7000]))  # the tail cut
    assert same_particulars(post, post + " Please share before 9 tonight!")


# --- the real encoder ------------------------------------------------------------

POST = (
    "Senator Elizabeth Warren voted against a bill that would have given free insulin "
    "to every veteran in the country. The vote took place last Thursday in Washington."
)
LONG_POST = POST + (
    " The bill, written by a group of senators from both parties, would have capped the price"
    " of insulin for veterans at zero dollars a month and paid pharmacies directly. Warren said"
    " the bill was a giveaway to drug companies. Veterans groups called her vote a betrayal."
)
# Two different claims about the same politician.
OTHER_CLAIM = (
    "Senator Elizabeth Warren owns a mansion in Cambridge worth twelve million dollars "
    "and pays no property tax on it, according to city records released this week."
)
SAME_TEMPLATE = (  # nearly the same words, a different claim: cosine about 0.91
    "Senator Elizabeth Warren voted for a bill that would have given free insulin to every "
    "illegal immigrant in the country. The vote took place last Thursday in Washington."
)


def forward(post: str) -> str:
    """What a forward does: a prefix, a hashtag, doubled spaces, an emoji, lower case."""
    post = post.replace("Senator", "senator", 1).replace(" voted", "  voted")
    return "Fwd: " + post.replace("country. ", "country. 😡 ") + " #share"


@pytest.mark.slow
def test_real_encoder_forward_is_near_and_same_topic_is_not(
    encoder: SentenceTransformerEncoder,
) -> None:
    vectors = encoder.encode([LONG_POST, OTHER_CLAIM, SAME_TEMPLATE, forward(LONG_POST)])
    assert vectors.shape == (4, DIM)
    assert vectors.dtype == np.float32
    index = NearDuplicateIndex(DIM)
    index.load(["original", "other-claim", "same-template"], vectors[:3])
    match = index.nearest(vectors[3], threshold=0.95)
    assert match is not None and match[0] == "original", float(vectors[0] @ vectors[3])
    # Different posts about the same politician are not repeats of each other.
    for own in ("other-claim", "same-template"):
        row = ["original", "other-claim", "same-template"].index(own)
        assert index.nearest(vectors[row], threshold=0.95, exclude={own}) is None


@pytest.mark.slow
def test_real_encoder_short_forward_is_near_once_canonical(
    encoder: SentenceTransformerEncoder,
) -> None:
    # On raw text, the forward of this 27-word post scores about 0.946 (the
    # decorations are a large share of a short post); canonical_text removes them.
    texts = [POST, OTHER_CLAIM, SAME_TEMPLATE, forward(POST)]
    vectors = encoder.encode([canonical_text(t) for t in texts])
    index = NearDuplicateIndex(DIM)
    index.load(["original", "other-claim", "same-template"], vectors[:3])
    match = index.nearest(vectors[3], threshold=0.95)
    assert match is not None and match[0] == "original"
    assert index.nearest(vectors[1], threshold=0.95, exclude={"other-claim"}) is None
    assert index.nearest(vectors[2], threshold=0.95, exclude={"same-template"}) is None
    # What the cosine cannot tell apart, same_particulars can.
    negated = POST.replace("voted against", "did not vote against")
    assert float(encoder.encode([canonical_text(negated)])[0] @ vectors[0]) > 0.9
    assert not same_particulars(POST, negated)
    assert same_particulars(POST, forward(POST))
