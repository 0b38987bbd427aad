"""NER backends with real models: spaCy's beam confidences and a transformers classifier."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from zofia_engine.errors import ModelUnavailableError
from zofia_engine.retrieval.entities import aggregate_units
from zofia_engine.retrieval.ner.spacy_backend import SpacyNER, tokens_from_parses
from zofia_engine.retrieval.ner.transformers_backend import (
    CHUNK_CHARS,
    TransformersNER,
    sentence_chunks,
)

STORY = (
    "Apple unveiled a new iPhone in Cupertino on Tuesday. "
    "Tim Cook told reporters that the European Commission had approved the design. "
    "Shares rose in New York."
)


@pytest.fixture(scope="module")
def spacy_ner() -> SpacyNER:
    ner = SpacyNER(beam_width=8)
    ner.load()
    return ner


def test_spacy_finds_entities_with_probabilities(spacy_ner: SpacyNER) -> None:
    out = spacy_ner.recognize(STORY)
    units = aggregate_units(out.tokens, STORY)
    by_text = {u.text: u for u in units}
    assert by_text["Tim Cook"].label == "PER"
    assert by_text["Cupertino"].label == "LOC"
    assert "European Commission" in " ".join(by_text)
    assert all(0.0 < t.score <= 1.0 for t in out.tokens)
    # No numeric or time labels: "Tuesday" is a DATE in OntoNotes.
    assert "Tuesday" not in by_text
    assert next(STORY[s:e] for s, e in out.sentences).endswith("Tuesday.")
    assert len(out.sentences) == 3


def test_beam_marginals_by_hand() -> None:
    doc = [SimpleNamespace(idx=i * 4, text="tok", is_space=False) for i in range(4)]
    parses = [
        (0.6, [(0, 2, "PERSON")]),  # best parse: tokens 0-1 are a PERSON
        (0.3, [(0, 1, "PERSON"), (2, 3, "GPE")]),
        (0.1, [(1, 2, "ORG")]),
    ]
    tokens = tokens_from_parses(doc, parses)
    assert [(t.index, t.label, t.begins) for t in tokens] == [(0, "PER", True), (1, "PER", False)]
    # Token 0 begins a PERSON in parses 1 and 2: 0.9. Token 1 is inside a PERSON in parse 1 only.
    assert tokens[0].score == pytest.approx(0.9)
    assert tokens[1].score == pytest.approx(0.6)


def test_beam_marginals_drop_unmapped_labels() -> None:
    doc = [SimpleNamespace(idx=0, text="5", is_space=False)]
    assert tokens_from_parses(doc, [(1.0, [(0, 1, "CARDINAL")])]) == []
    assert tokens_from_parses(doc, []) == []


def test_spacy_missing_model_is_a_clear_error() -> None:
    with pytest.raises(ModelUnavailableError, match="not installed"):
        SpacyNER("no_such_spacy_model_xyz").load()


@pytest.fixture(scope="module")
def bert_like_ner_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real BERT token classifier on disk, with the CoNLL label set of dslim/bert-base-NER.

    The encoder is the packaged MiniLM (a BERT), the classification head is fresh:
    the labels are arbitrary, but the loading and decoding path is the real one.
    """
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from zofia_engine.encoder import packaged_minilm_path

    labels = ["O", "B-MISC", "I-MISC", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]
    src = packaged_minilm_path()
    model = AutoModelForTokenClassification.from_pretrained(
        src,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    # Bias the head towards entity labels so the decoding path sees B-/I- tags.
    with __import__("torch").no_grad():
        model.classifier.bias[0] = -5.0
    out = tmp_path_factory.mktemp("bert-ner")
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(src).save_pretrained(out)
    return out


def test_transformers_backend_loads_a_local_path(bert_like_ner_dir: Path) -> None:
    ner = TransformersNER(str(bert_like_ner_dir))
    out = ner.recognize(STORY)
    assert out.tokens, "a head biased away from O must tag tokens"
    for tok in out.tokens:
        assert tok.label in {"PER", "ORG", "LOC", "MISC"}
        assert 0.0 < tok.score <= 1.0
        piece = STORY[tok.start : tok.end]
        assert piece.strip() and piece in STORY
    assert len(out.sentences) == 3
    units = aggregate_units(out.tokens, STORY)
    assert units and all(u.text == STORY[u.start : u.end] for u in units)


def test_transformers_backend_long_text_maps_offsets(bert_like_ner_dir: Path) -> None:
    text = " ".join(f"Sentence {i} mentions Paris and Berlin." for i in range(150))
    assert len(text) > 2 * CHUNK_CHARS
    out = TransformersNER(str(bert_like_ner_dir)).recognize(text)
    late = [t for t in out.tokens if t.start > 2 * CHUNK_CHARS]
    assert late, "tokens from later chunks are reported"
    for tok in late[:50]:
        assert text[tok.start : tok.end].strip()
    # Indices never collide across chunks.
    assert len({t.index for t in out.tokens}) == len(out.tokens)


def test_transformers_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="cannot load NER model"):
        TransformersNER(str(tmp_path / "nothing-here")).load()


def test_chunks_respect_the_size_and_cover_everything() -> None:
    sentences = [(0, 500), (501, 1000), (1001, 1100), (1101, 4000)]
    chunks = sentence_chunks(sentences)
    assert chunks[0] == (0, 1100)
    assert all(e - s <= CHUNK_CHARS for s, e in chunks)
    assert chunks[-1][1] == 4000
