"""The optional NLI / MiniCheck-style stance verifier (zofia_engine/llm/nli_backend.py).

Every model here is a tiny random BERT built in a temporary directory, with a
WordPiece tokenizer written offline: it proves the loading, label mapping and
batching code, not the quality of any real NLI model. Nothing is downloaded.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.peers.fakes.tiny_nli import NLI_LABELS, PAIRS

from zofia_engine.config import StanceSettings
from zofia_engine.errors import ConfigError, ModelUnavailableError
from zofia_engine.llm.nli_backend import (
    NLIStanceModel,
    StanceScores,
    decide,
)

#: :func:`tests.peers.fakes.tiny_nli.build_nli`, through the ``tiny_nli`` fixture
#: (tests/conftest.py), which puts a test that builds one in the slow tier: it loads torch
#: and transformers
BuildNLI = Callable[..., Path]


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory: pytest.TempPathFactory, tiny_nli: BuildNLI) -> Path:
    return tiny_nli(tmp_path_factory.mktemp("nli"), NLI_LABELS)


@pytest.fixture(scope="module")
def loaded(nli_dir: Path) -> NLIStanceModel:
    model = NLIStanceModel(str(nli_dir), batch_size=2)
    model.load()
    return model


def _softmax(xs: list[float]) -> list[float]:
    exps = [math.exp(x) for x in xs]
    return [e / sum(exps) for e in exps]


def _close(a: StanceScores, b: StanceScores, tol: float = 1e-5) -> bool:
    return all(
        abs(getattr(a, f) - getattr(b, f)) <= tol for f in ("supports", "refutes", "neither")
    )


async def test_loads_by_path_and_maps_nli_labels(tmp_path: Path, tiny_nli: BuildNLI) -> None:
    path = tiny_nli(tmp_path / "fixed", NLI_LABELS, bias=[2.0, 0.0, -1.0])
    model = NLIStanceModel(str(path))
    model.load()
    assert model.name == f"nli:{path}"
    [scores] = await model.score([("the sky is blue", "the sky is green")])
    want = _softmax([2.0, 0.0, -1.0])
    assert _close(scores, StanceScores(want[0], want[2], want[1]))


async def test_batched_equals_one_by_one_and_sums_to_one(
    loaded: NLIStanceModel, nli_dir: Path
) -> None:
    batched = await loaded.score(PAIRS)  # batch_size 2: batches of 2, 2 and 1
    single = NLIStanceModel(str(nli_dir), batch_size=1)
    one_by_one = [(await single.score([pair]))[0] for pair in PAIRS]
    assert len(batched) == len(PAIRS)
    for a, b in zip(batched, one_by_one, strict=True):
        assert _close(a, b)
        assert abs(a.supports + a.refutes + a.neither - 1.0) < 1e-5
        assert min(a.supports, a.refutes, a.neither) > 0.0
    # A random head still tells different pairs apart: real numbers, not a constant.
    assert len({round(s.supports, 6) for s in batched}) > 1
    assert await loaded.score([]) == []


async def test_binary_checker_never_refutes(tmp_path: Path, tiny_nli: BuildNLI) -> None:
    path = tiny_nli(tmp_path / "minicheck", {0: "unsupported", 1: "supported"}, bias=[0.0, 1.0])
    model = NLIStanceModel(str(path))
    scores = await model.score(PAIRS[:3])
    supported = _softmax([0.0, 1.0])[1]
    for s in scores:
        assert s.refutes == 0.0
        assert abs(s.supports - supported) < 1e-5
        assert abs(s.neither - (1.0 - s.supports)) < 1e-6


def test_unmappable_labels_are_a_sentence_naming_the_setting(
    tmp_path: Path, tiny_nli: BuildNLI
) -> None:
    path = tiny_nli(tmp_path / "opaque", {0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(ModelUnavailableError) as info:
        NLIStanceModel(str(path)).load()
    message = str(info.value)
    assert "'LABEL_0'" in message and "'LABEL_1'" in message
    assert "stance.labels" in message


async def test_labels_setting_overrides_the_guess(tmp_path: Path, tiny_nli: BuildNLI) -> None:
    path = tiny_nli(tmp_path / "opaque2", {0: "LABEL_0", 1: "LABEL_1"}, bias=[0.0, 2.0])
    model = NLIStanceModel(str(path), labels={"LABEL_0": "neither", "LABEL_1": "supports"})
    [s] = await model.score([PAIRS[0]])
    assert s.refutes == 0.0
    assert abs(s.supports - _softmax([0.0, 2.0])[1]) < 1e-5
    # It also wins over a name that would have been guessed otherwise.
    nli = tiny_nli(tmp_path / "swapped", NLI_LABELS, bias=[2.0, 0.0, -1.0])
    swapped = NLIStanceModel(
        str(nli), labels={"entailment": "refutes", "CONTRADICTION": "supports"}
    )
    [t] = await swapped.score([PAIRS[0]])
    want = _softmax([2.0, 0.0, -1.0])
    assert _close(t, StanceScores(supports=want[2], refutes=want[0], neither=want[1]))


def test_a_labels_value_that_is_no_stance_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"stance\.labels"):
        NLIStanceModel("x", labels={"LABEL_0": "maybe"})


@pytest.mark.slow  # it imports transformers to look for the model
def test_a_missing_model_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("zofia-tests/no-such-nli-model", str(tmp_path / "nothing-here")):
        with pytest.raises(ModelUnavailableError, match="cannot load stance model") as info:
            NLIStanceModel(name).load()
        assert name in str(info.value)


def test_decide_refutes_wins_over_supports() -> None:
    scores = [
        StanceScores(0.9, 0.05, 0.05),
        StanceScores(0.1, 0.7, 0.2),
        StanceScores(0.05, 0.9, 0.05),
        StanceScores(0.3, 0.45, 0.25),  # highest, but under the threshold
    ]
    assert decide(scores, 0.5) == ("refutes", [2, 1])


def test_decide_supports_then_neither() -> None:
    scores = [
        StanceScores(0.6, 0.1, 0.3),
        StanceScores(0.2, 0.55, 0.25),  # refutes 0.55 < 0.6
        StanceScores(0.8, 0.1, 0.1),
        StanceScores(0.3, 0.1, 0.6),
    ]
    assert decide(scores, 0.6) == ("supports", [2, 0])
    assert decide([StanceScores(0.3, 0.2, 0.5), StanceScores(0.45, 0.1, 0.45)], 0.5) == (
        "neither",
        [],
    )
    assert decide([], 0.5) == ("neither", [])
    # Tied for highest counts; at the threshold but below another stance does not.
    assert decide([StanceScores(0.5, 0.0, 0.5)], 0.4) == ("supports", [0])
    assert decide([StanceScores(0.4, 0.0, 0.6)], 0.4) == ("neither", [])


def test_decide_keeps_at_most_three_in_probability_order() -> None:
    probs = [0.6, 0.95, 0.7, 0.99, 0.8]
    scores = [StanceScores(p, 0.0, 1.0 - p) for p in probs]
    assert decide(scores, 0.5) == ("supports", [3, 1, 4])


def test_settings_need_a_model_for_nli() -> None:
    assert StanceSettings().backend == "llm"
    with pytest.raises(ValidationError, match=r"needs stance\.model"):
        StanceSettings(backend="nli")
    ok = StanceSettings(backend="nli", model="some/model", labels={"LABEL_1": "supports"})
    assert ok.labels == {"LABEL_1": "supports"}
    with pytest.raises(ValidationError):
        StanceSettings(labels={"LABEL_1": "maybe"})
    with pytest.raises(ValidationError):
        StanceSettings(batch_size=0)
