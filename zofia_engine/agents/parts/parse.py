"""Claims parsed for their parts: a fragment read as the post's sentence it names, a
reported clause parsed on its own, a pronoun subject taken from the core claim, and the
values of the post's sentence a claim left out kept as parts (:mod:`.omitted`)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from ...report import ClaimResult
from ...retrieval.ner.parser import TextParser
from ...text import without_symbols
from .claim import ClaimParts, claim_parts, reported_clause
from .omitted import omitted

__all__ = ["parse_claims", "whole_claims"]


async def whole_claims(
    parser: TextParser, claims: Sequence[ClaimResult], sentences: Sequence[str]
) -> list[ClaimResult]:
    """``claims``, a fragment among them ("By Charles Dickens.": no verb, which a small
    extractor writes) replaced by the post's sentence it names, which says whole what
    the fragment cuts from it."""
    parsed = await asyncio.to_thread(parser.parse, [c.text for c in claims])
    whole = []
    for claim, p in zip(claims, parsed, strict=True):
        n = claim.sentence
        fragment = not any(w.pos in ("VERB", "AUX") for w in p.words)
        if fragment and n is not None and 1 <= n <= len(sentences):
            claim = claim.model_copy(update={"text": sentences[n - 1]})
        whole.append(claim)
    return whole


async def parse_claims(
    parser: TextParser, claims: Sequence[ClaimResult], sentences: Sequence[str] = ()
) -> list[ClaimParts]:
    """Each claim's subject and parts. A report's clause is parsed on its own ("Scientists
    say [black holes are made of ice]"); a claim whose subject is a pronoun ("It was
    completed in 1889.") takes the core claim's subject. A value of the post's sentence
    the claim left out (``sentences``: the post's, numbered from 1 by ``claim.sentence``)
    is kept as a part no passage is asked about (:mod:`.omitted`)."""
    parsed = await asyncio.to_thread(parser.parse, [without_symbols(c.text) for c in claims])
    reported = {i: r for i, p in enumerate(parsed) if (r := reported_clause(p))}
    if reported:
        again = await asyncio.to_thread(parser.parse, list(reported.values()))
        for i, clause in zip(reported, again, strict=True):
            parsed[i] = clause
    split = [claim_parts(p) for p in parsed]
    split = await _with_omitted(parser, claims, split, sentences)
    core = split[0] if split else None
    if core is None:
        return split
    return [
        p
        if p.subject
        else ClaimParts(
            p.text,
            core.subject,
            core.subject_head,
            p.parts,
            core.named,
            core.generic,
            core.names,
        )
        for p in split
    ]


async def _with_omitted(
    parser: TextParser,
    claims: Sequence[ClaimResult],
    split: list[ClaimParts],
    sentences: Sequence[str],
) -> list[ClaimParts]:
    named = [c.sentence if c.sentence and 1 <= c.sentence <= len(sentences) else 0 for c in claims]
    wanted = sorted({n for n in named if n})
    if not wanted:
        return split
    parsed = dict(
        zip(
            wanted,
            await asyncio.to_thread(
                parser.parse, [without_symbols(sentences[n - 1]) for n in wanted]
            ),
            strict=True,
        )
    )
    return [
        replace(p, parts=(*p.parts, *omitted(p, parsed[n]))) if n else p
        for p, n in zip(split, named, strict=True)
    ]
