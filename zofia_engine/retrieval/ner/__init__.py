"""Named-entity recognition backends (paper §3.1)."""

from __future__ import annotations

from ...config import NERSettings
from .base import COARSE_LABELS, NERBackend, NEROutput, TaggedToken

__all__ = ["COARSE_LABELS", "NERBackend", "NEROutput", "TaggedToken", "build_ner_backend"]


def build_ner_backend(settings: NERSettings) -> NERBackend:
    """The backend ``settings.backend`` names, not yet loaded."""
    if settings.backend == "transformers":
        from .transformers_backend import TransformersNER

        return TransformersNER(settings.transformers_model)
    from .spacy_backend import SpacyNER

    return SpacyNER(settings.spacy_model, beam_width=settings.beam_width)
