"""Values of the post's sentence that its claim leaves out.

The extractor writes each claim from a sentence of the post, and a small model trims:
"Chinese characters are used in regions influenced by Chinese culture including Japan,
Korea, and Northern Ireland" may come back as "… including Japan, Korea". Every value
the claim keeps may then agree with the evidence while the one it dropped is the false
one. :func:`omitted` finds the checkable values of the sentence that the claim does not
say; the reader keeps them as parts it cannot check, so the claim cannot be confirmed
whole, though a value it does say can still refute it.
"""

from __future__ import annotations

from ...retrieval.ner.parser import Parsed
from .claim import KIND_OF_LABEL, ClaimParts, Part
from .names import name_key
from .phrases import with_phrases

__all__ = ["omitted"]


def omitted(claim: ClaimParts, sentence: Parsed) -> tuple[Part, ...]:
    """The checkable values of ``sentence`` (the post's sentence ``claim`` was taken
    from) that ``claim`` does not say, as parts no passage is asked about; none of the
    claim's subject."""
    said = f" {name_key(claim.text)} "
    subject = set(name_key(claim.subject).split())
    found = []
    for e in with_phrases(sentence):
        kind = KIND_OF_LABEL.get(e.label)
        key = name_key(e.text)
        if kind is None or not key or f" {key} " in said or set(key.split()) <= subject:
            continue
        found.append(Part(kind, e.text, -1, -1, (e.text,), comparable=False, label=e.label))
    return tuple(found)
