"""The published fact-check seam: one async method per backend.

A backend looks a claim up among fact-checks that publishers have already written
(ClaimReview records: PolitiFact, Snopes, AFP, Full Fact, ...) and returns one
:class:`FactCheck` per review.
"""

from __future__ import annotations

import abc
import datetime as dt
import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

__all__ = ["FactCheck", "FactCheckBackend", "FactCheckQuery", "language_code"]

# English names of the languages a chat can pick (bots.render.languages), and a few
# more, to ISO 639-1. Anything else that is not already a code is left out of the query.
_LANGUAGE_CODES = {
    "arabic": "ar",
    "bengali": "bn",
    "catalan": "ca",
    "chinese": "zh",
    "croatian": "hr",
    "czech": "cs",
    "danish": "da",
    "dutch": "nl",
    "english": "en",
    "finnish": "fi",
    "french": "fr",
    "german": "de",
    "greek": "el",
    "hebrew": "he",
    "hindi": "hi",
    "hungarian": "hu",
    "indonesian": "id",
    "italian": "it",
    "japanese": "ja",
    "korean": "ko",
    "malay": "ms",
    "norwegian": "no",
    "persian": "fa",
    "polish": "pl",
    "portuguese": "pt",
    "romanian": "ro",
    "russian": "ru",
    "serbian": "sr",
    "slovak": "sk",
    "spanish": "es",
    "swahili": "sw",
    "swedish": "sv",
    "tagalog": "tl",
    "thai": "th",
    "turkish": "tr",
    "ukrainian": "uk",
    "urdu": "ur",
    "vietnamese": "vi",
}
_KNOWN_CODES = frozenset(_LANGUAGE_CODES.values())
# "fr", "pt-BR", "zh_TW": a code of the table, with an optional region.
_CODE = re.compile(r"^([a-z]{2})(?:[-_]([a-z]{2}|\d{3}))?$", re.IGNORECASE)


def language_code(language: str) -> str:
    """``language`` as a BCP-47 code the fact-check APIs take, or ``""`` when unknown.

    Args:
        language: an ISO 639-1 code (``"fr"``, ``"pt-BR"``) or an English name
            (``"French"``); case and surrounding space do not matter.

    Returns:
        ``"fr"`` for ``"French"`` or ``" FR "``, ``"pt-BR"`` for ``"pt_br"``;
        ``""`` for an empty or unknown language (search every language).
    """
    text = " ".join(language.split())
    named = _LANGUAGE_CODES.get(text.casefold())
    if named:
        return named
    match = _CODE.match(text)
    if match is None or match[1].lower() not in _KNOWN_CODES:
        return ""
    return match[1].lower() + (f"-{match[2].upper()}" if match[2] else "")


@dataclass(frozen=True)
class FactCheckQuery:
    """One look-up: a claim or sentence, in a language, before a date.

    ``language`` is an ISO 639-1 code or an English language name (see
    :func:`language_code`); an unknown one searches every language. ``cutoff`` is
    the last day a review may be from (the day before the post's publication date),
    so a check of an old post cannot read the answer from a later fact-check.
    """

    text: str
    language: str = "en"
    cutoff: dt.date | None = None
    max_results: int = 5


class FactCheck(BaseModel):
    """One published review of a claim (a ClaimReview).

    ``publisher`` is the publisher's name, else its site; ``url`` is the review's
    page; ``rating`` is the publisher's own verdict text (``"False"``, ``"Pants on
    Fire"``, ``"Faux"``, or a sentence); ``reviewed`` is when it was published.
    """

    model_config = ConfigDict(extra="forbid")

    claim: str
    claimant: str = ""
    claim_date: dt.date | None = None
    publisher: str
    publisher_site: str = ""
    url: str
    title: str = ""
    rating: str
    reviewed: dt.date | None = None
    language: str = ""


class FactCheckBackend(abc.ABC):
    """A published fact-check search. Implementations raise :class:`SourceError`
    subclasses on failure."""

    name: str

    @abc.abstractmethod
    async def search(self, query: FactCheckQuery) -> list[FactCheck]:
        """Reviews of claims like ``query.text``: at most ``query.max_results``, none
        published after ``query.cutoff``, best match first."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
