"""Google's Fact Check Tools API (``claims:search``) as a published fact-check backend.

One GET per look-up. The API searches the ClaimReview records that fact-checkers
publish and answers claims, each with one or more reviews; every review becomes a
:class:`FactCheck`. The key travels as the ``key`` query parameter, as Google's
API takes it, and is never logged nor put in an error message.

A cutoff is enforced on the answer only: ``maxAgeDays`` keeps results *newer*
than a number of days before today, which cannot say "nothing after this date",
so it is never sent. Reviews dated after the cutoff are dropped (by review date,
else by claim date); undated ones are kept.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from typing import Any, Unpack
from urllib.parse import urlsplit

from ...config import FactCheckSettings
from ...errors import SourceError, SourceResponseError
from ...post import cut_at_word
from ...snippets import parse_date, snippet_text
from ..http import JsonHttpClient, Pace, paced, required_key
from .base import FactCheck, FactCheckBackend, FactCheckQuery, language_code

__all__ = ["GoogleFactCheck"]

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://factchecktools.googleapis.com/v1alpha1"
MAX_QUERY_CHARS = 500  # a claim, not an article: keeps the URL short
MAX_PAGE_SIZE = 25
# With a cutoff, later reviews are dropped after the answer: ask for more claims.
CUTOFF_OVERFETCH = 4
_SETTING = "factcheck.google.api_key"
_STATUS_DETAIL = re.compile(r"^HTTP (\d{3}): (.*)$", re.DOTALL)
_FIELD = r'"{}"\s*:\s*"((?:[^"\\]|\\.)*)("?)'


class GoogleFactCheck(FactCheckBackend):
    """The Google Fact Check Tools API, ``claims:search``.

    Args:
        api_key: a Google Cloud API key with the Fact Check Tools API enabled;
            empty raises :class:`ConfigError`.
        base_url: the API root, without ``/claims:search``.
        pace: how requests are paced and retried (:class:`~..http.Pace`; 5 requests a
            second by default).
    """

    name = "factcheck:google"

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        **pace: Unpack[Pace],
    ) -> None:
        self._key = required_key(api_key, _SETTING)
        self._endpoint = base_url.rstrip("/") + "/claims:search"
        pace = Pace(requests_per_second=5.0) | pace
        self._http = JsonHttpClient(self.name, headers={"Accept": "application/json"}, **pace)

    @classmethod
    def from_settings(cls, settings: FactCheckSettings) -> GoogleFactCheck:
        """The backend with the key, URL, timeout, retries and rate of the
        ``[factcheck]`` and ``[factcheck.google]`` settings."""
        google = settings.google
        return cls(google.api_key, base_url=google.base_url, **paced(settings, google))

    def params(self, query: FactCheckQuery) -> dict[str, str | int]:
        """The request's query-string parameters for ``query``, without the key: ``query``
        (the text, cut at a word to 500 characters), ``languageCode`` when the language is
        known, and ``pageSize``: ``max_results`` claims, four times that (at most 25) with a
        cutoff, since later reviews are dropped from the answer."""
        size = query.max_results * (CUTOFF_OVERFETCH if query.cutoff else 1)
        params: dict[str, str | int] = {
            "query": cut_at_word(" ".join(query.text.split()), MAX_QUERY_CHARS),
            "pageSize": max(1, min(MAX_PAGE_SIZE, size)),
        }
        code = language_code(query.language)
        if code:
            params["languageCode"] = code
        return params

    async def search(self, query: FactCheckQuery) -> list[FactCheck]:
        """Look ``query`` up in Google's ClaimReview index.

        Args:
            query: the claim, language, cutoff and result budget.

        Returns:
            At most ``query.max_results`` reviews in Google's order, one per review
            URL, none dated after the cutoff; ``[]`` when nothing matched.

        Raises:
            SourceRateLimitedError: Google kept answering 429.
            SourceTimeoutError: Google did not answer in time.
            SourceResponseError: the key was refused (400/403), another error status,
                no connection, or a body that is not the API's format.
        """
        params = self.params(query)
        if query.max_results <= 0 or not params["query"]:
            return []
        try:
            body = await self._http.get_json(self._endpoint, {**params, "key": self._key})
        except SourceError as exc:
            explained = self._explained(exc)
            if explained is exc:
                raise  # keeps the aiohttp error as its cause
            raise explained from None
        reviews = [review for claim in _claims(body) for review in _reviews(claim)]
        kept = _admit(reviews, query)
        log.debug(
            "%s: %d of %d reviews kept for a %d-character query",
            self.name,
            len(kept),
            len(reviews),
            len(str(params["query"])),
        )
        return kept

    async def aclose(self) -> None:
        """Close the HTTP session."""
        await self._http.aclose()

    def _explained(self, exc: SourceError) -> SourceError:
        """``exc`` with Google's error made readable and the key taken out; ``exc``
        itself when neither applies.

        :class:`JsonHttpClient` reports a non-retried error status as ``HTTP 403:
        <first 200 bytes of the body>``; Google's body is ``{"error": {"code",
        "message", "status"}}``.
        """
        detail = exc.detail
        match = _STATUS_DETAIL.match(detail) if isinstance(exc, SourceResponseError) else None
        if match is not None:
            status, body = int(match[1]), match[2]
            message = _field(body, "message") or "no message"
            reason = _field(body, "status")
            code = f"HTTP {status} {reason}".strip()
            if status == 403 or (status == 400 and "API key" in message):
                detail = (
                    f"the API key in {_SETTING} was refused ({code}: {message}); "
                    "check the key and that the Fact Check Tools API is enabled for its project"
                )
            else:
                detail = f"request refused ({code}): {message}"
        elif self._key not in f"{detail} {exc.__cause__} {exc.__cause__!r}":
            return exc  # a timeout, a lost connection: nothing to add, nothing to hide
        return type(exc)(self.name, detail.replace(self._key, "***"))


def _field(body: str, name: str) -> str:
    """A string field of a (possibly cut) JSON error body; ``""`` when absent."""
    match = re.search(_FIELD.format(name), body)
    if match is None:
        return ""
    try:
        value = str(json.loads(f'"{match[1]}"'))
    except json.JSONDecodeError:
        value = match[1]
    value = " ".join(value.split())
    return value if match[2] else value + "…"  # no closing quote: the body was cut


def _claims(body: Any) -> list[dict[str, Any]]:
    """The ``claims`` list of a ``claims:search`` answer, checked for shape."""
    if not isinstance(body, dict):
        raise SourceResponseError(
            GoogleFactCheck.name, f"expected a JSON object, got {type(body).__name__}"
        )
    claims = body.get("claims", [])  # Google answers {} when nothing matched
    if not isinstance(claims, list) or not all(isinstance(c, dict) for c in claims):
        raise SourceResponseError(GoogleFactCheck.name, "'claims' is not a list of objects")
    return claims


def _reviews(claim: dict[str, Any]) -> list[FactCheck]:
    """One :class:`FactCheck` per usable ``claimReview`` of ``claim`` (with a URL and a
    rating)."""
    reviews = claim.get("claimReview", [])
    if not isinstance(reviews, list):
        raise SourceResponseError(GoogleFactCheck.name, "'claimReview' is not a list")
    text = snippet_text(claim.get("text"))
    found = []
    for review in reviews:
        if not isinstance(review, dict):
            continue
        url = review.get("url")
        rating = snippet_text(review.get("textualRating"))
        if not isinstance(url, str) or not url.strip() or not rating:
            continue
        publisher = review.get("publisher")
        publisher = publisher if isinstance(publisher, dict) else {}
        site = snippet_text(publisher.get("site"))
        found.append(
            FactCheck(
                claim=text,
                claimant=snippet_text(claim.get("claimant")),
                claim_date=parse_date(claim.get("claimDate")),
                publisher=(
                    snippet_text(publisher.get("name")) or site or (urlsplit(url).hostname or "")
                ),
                publisher_site=site,
                url=url.strip(),
                title=snippet_text(review.get("title")),
                rating=rating,
                reviewed=parse_date(review.get("reviewDate")),
                language=snippet_text(review.get("languageCode")),
            )
        )
    return found


def _admit(reviews: list[FactCheck], query: FactCheckQuery) -> list[FactCheck]:
    """Keep reviews in order, the first of each URL, none dated after the cutoff, up to
    ``query.max_results``."""
    kept: list[FactCheck] = []
    seen: set[str] = set()
    for review in reviews:
        when: dt.date | None = review.reviewed or review.claim_date
        if query.cutoff and when and when > query.cutoff:
            continue
        if review.url in seen:
            continue
        seen.add(review.url)
        kept.append(review)
        if len(kept) >= query.max_results:
            break
    return kept
