"""Choosing Stage 1's Wikipedia articles: eq. 7 for the keywords, closeness to the
post for the articles the post names by title, all encoded in one batch.

A keyword keeps the sense eq. 7 chose (paper §3.4). The title matches come after
the keywords' articles, ranked by the cosine between the post's vector and each
article's gist (its title and short description). One more kind of title match:
a keyword that is itself an article's exact title ("Moon", "Microsoft") while
eq. 7 chose another sense ("Moon landing", "Microsoft Windows"); its exact-title
article then joins as a second opinion when it is closer to the post than eq. 7's
choice. Nothing eq. 7 chose is dropped; a title match whose cosine to the post is
under :data:`MIN_CLOSENESS` is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...ports import TextEncoder
from ...records.stage1 import WikiCandidate
from ..disambiguation import SenseChoice, modified_contexts, pick_senses
from ..ner.sentences import split_sentences
from .gazetteer import TitleMatch
from .titles import normalize_title, without_disambiguator

__all__ = ["MIN_CLOSENESS", "Pick", "SenseRequest", "exact_titles", "gist", "pick_articles"]

# A title match further from the post than this is a common word of a long story
# ("autumn", "company" in a product launch), not what it is about.
MIN_CLOSENESS = 0.15

# Per keyword: its context, its surface forms, the context's vector, its candidates.
SenseRequest = tuple[str, list[str], np.ndarray, Sequence[WikiCandidate]]


@dataclass(frozen=True)
class Pick:
    """One article for the evidence: the phrase that led to it, its score (eq. 7's
    for a keyword, the cosine to the post for a title match), the senses it beat."""

    keyword: str
    candidate: WikiCandidate
    score: float
    candidates: list[str]
    by_title: bool


def gist(candidate: WikiCandidate) -> str:
    """What an article is about, to compare with the post: its title and short
    description, else its title and first sentence."""
    if candidate.description.strip():
        return f"{candidate.title}: {candidate.description.strip()}"
    sentences = split_sentences(candidate.extract)
    return f"{candidate.title}: {sentences[0]}" if sentences else candidate.title


def exact_titles(names: Sequence[str], candidates: Sequence[WikiCandidate]) -> list[int]:
    """Indices of the candidates whose title, disambiguator aside, is one of ``names``."""
    keys = {normalize_title(n) for n in names}
    return [
        i
        for i, c in enumerate(candidates)
        if normalize_title(without_disambiguator(c.title)) in keys
    ]


def pick_articles(
    requests: Sequence[SenseRequest],
    keywords: Sequence[str],
    titles: Sequence[TitleMatch],
    post_vector: np.ndarray | None,
    encoder: TextEncoder,
) -> list[Pick]:
    """The keywords' picks (eq. 7) in keyword order, then the title picks best first.

    Args:
        requests: eq. 7's input per keyword (see :func:`~..disambiguation.choose_senses`).
        keywords: each keyword's text, in the order of ``requests``.
        titles: the post's title matches.
        post_vector: the post's vector; ``None`` turns title matching off (eq. 7 only).
        encoder: the shared encoder, called once.
    """
    modified = modified_contexts(requests, split_sentences)
    # A keyword with an exact-title sense among others: all its senses get compared.
    rivals = [
        list(cands)
        if post_vector is not None and 0 < len(exact_titles(names, cands)) < len(cands)
        else []
        for _, names, _, cands in requests
    ]
    gists = [gist(c) for cands in rivals for c in cands]
    if post_vector is not None:
        gists += [gist(c) for match in titles for c in match.candidates]
    strings = [*modified, *gists]
    vectors = encoder.encode(strings) if strings else np.zeros((0, 0), np.float32)
    choices = pick_senses(requests, vectors[: len(modified)])
    picks = [
        Pick(keyword, choice.candidate, choice.score, [c.title for c in req[3]], False)
        for keyword, choice, req in zip(keywords, choices, requests, strict=True)
        if choice is not None
    ]
    if post_vector is None:
        return picks
    closeness = [float(x) for x in vectors[len(modified) :] @ post_vector] if gists else []
    n_rivals = sum(len(r) for r in rivals)
    extra = _second_opinions(requests, keywords, choices, rivals, closeness[:n_rivals])
    extra += _title_picks(titles, closeness[n_rivals:])
    extra = sorted((p for p in extra if p.score >= MIN_CLOSENESS), key=lambda p: -p.score)
    return [*picks, *extra]


def _second_opinions(
    requests: Sequence[SenseRequest],
    keywords: Sequence[str],
    choices: Sequence[SenseChoice | None],
    rivals: Sequence[list[WikiCandidate]],
    closeness: Sequence[float],
) -> list[Pick]:
    """A keyword's exact-title article, where eq. 7 chose another sense that is
    further from the post."""
    picks: list[Pick] = []
    row = 0
    for (_, names, _, _), keyword, choice, cands in zip(
        requests, keywords, choices, rivals, strict=True
    ):
        scores = closeness[row : row + len(cands)]
        row += len(cands)
        if not cands or choice is None:
            continue
        exact = exact_titles(names, cands)
        best = max(exact, key=lambda i: scores[i])
        chosen = cands.index(choice.candidate)
        if chosen not in exact and scores[best] > scores[chosen]:
            titles = [cands[i].title for i in exact]
            picks.append(Pick(keyword, cands[best], scores[best], titles, True))
    return picks


def _title_picks(titles: Sequence[TitleMatch], closeness: Sequence[float]) -> list[Pick]:
    """Each title match's sense closest to the post."""
    picks: list[Pick] = []
    row = 0
    for match in titles:
        scores = closeness[row : row + len(match.candidates)]
        row += len(match.candidates)
        if not match.candidates:
            continue
        best = max(range(len(scores)), key=lambda i: scores[i])
        senses = [c.title for c in match.candidates]
        picks.append(Pick(match.phrase, match.candidates[best], scores[best], senses, True))
    return picks
