"""A fake Google Fact Check Tools API (``claims:search``) that speaks the real protocol.

An ``aiohttp.web`` application on 127.0.0.1 with an ephemeral port. Like Google it
takes the API key as the ``key`` query parameter and refuses a bad one with Google's
error JSON: a wrong key is a **400 INVALID_ARGUMENT, "API key not valid. Please pass
a valid API key."** (reason ``API_KEY_INVALID``); a missing key is a 403
PERMISSION_DENIED, "The request is missing a valid API key.". A key of a project
without the API enabled gets a 403 PERMISSION_DENIED (reason ``SERVICE_DISABLED``),
see :func:`api_not_enabled`. Error bodies are pretty-printed, as Google sends them.

It records every request, answers one-shot replies queued with
:meth:`FakeFactCheck.script` first (429, 403, 500 ...), then matches ``query``
against an in-memory list of ClaimReview claims by word overlap, honouring
``languageCode`` and ``pageSize``; ``{}`` when nothing matches, as Google does.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections import deque
from typing import Any

from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy, MultiDict

from .loopback import LoopbackServer
from .search_peers import RecordedRequest, Reply

__all__ = [
    "GOOGLE_KEY",
    "SAMPLE_CLAIMS",
    "FakeFactCheck",
    "api_key_invalid",
    "api_not_enabled",
    "claim_entry",
    "claim_review",
    "google_error",
    "quota_exhausted",
    "server_error",
]

GOOGLE_KEY = "AIzaSyTEST-factcheck-key-0123456789abc"
DEFAULT_PAGE_SIZE = 10
# Words too common to count as overlap (English, and French for the AFP example).
_STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "de", "des", "du", "for", "from",
        "has", "have", "in", "is", "it", "la", "le", "les", "of", "on", "or", "that", "the",
        "this", "to", "was", "were", "will", "with",
    }
)  # fmt: skip


def _stamp(value: dt.date | str | None) -> str | None:
    """Google's timestamp form, ``2020-12-03T00:00:00Z``."""
    if value is None or isinstance(value, str):
        return value
    return f"{value:%Y-%m-%d}T00:00:00Z"


def claim_review(
    publisher: str | None,
    site: str | None,
    url: str,
    rating: str,
    *,
    title: str = "",
    reviewed: dt.date | str | None = None,
    language: str = "en",
) -> dict[str, Any]:
    """One entry of a claim's ``claimReview``; ``None`` leaves a field out."""
    review: dict[str, Any] = {"publisher": {}, "url": url, "textualRating": rating}
    if publisher is not None:
        review["publisher"]["name"] = publisher
    if site is not None:
        review["publisher"]["site"] = site
    if title:
        review["title"] = title
    if reviewed is not None:
        review["reviewDate"] = _stamp(reviewed)
    review["languageCode"] = language
    return review


def claim_entry(
    text: str,
    *reviews: dict[str, Any],
    claimant: str | None = None,
    claim_date: dt.date | str | None = None,
) -> dict[str, Any]:
    """One entry of ``claims``: the claim as the reviews state it, and its reviews."""
    claim: dict[str, Any] = {"text": text}
    if claimant is not None:
        claim["claimant"] = claimant
    if claim_date is not None:
        claim["claimDate"] = _stamp(claim_date)
    claim["claimReview"] = list(reviews)
    return claim


# Illustrative entries in the shape and style of real ClaimReview data.
SAMPLE_CLAIMS: tuple[dict[str, Any], ...] = (
    claim_entry(
        "COVID-19 vaccines contain microchips to track people.",
        claim_review(
            "PolitiFact",
            "politifact.com",
            "https://www.politifact.com/factchecks/2020/dec/04/facebook-posts/no-covid-19-vaccines-dont-contain-microchips/",
            "Pants on Fire",
            title="No, COVID-19 vaccines don't contain microchips",
            reviewed=dt.date(2020, 12, 4),
        ),
        claim_review(
            "Snopes",
            "snopes.com",
            "https://www.snopes.com/fact-check/covid-vaccine-microchip/",
            "False",
            title="Do COVID-19 Vaccines Contain Microchips?",
            reviewed=dt.date(2020, 12, 10),
        ),
        claimant="Facebook posts",
        claim_date=dt.date(2020, 12, 3),
    ),
    claim_entry(
        "Les vaccins contre le Covid-19 contiennent des micropuces.",
        claim_review(
            "AFP Factuel",
            "factuel.afp.com",
            "https://factuel.afp.com/les-vaccins-contre-le-covid-19-ne-contiennent-pas-de-micropuces",
            "Faux",
            title="Les vaccins contre le Covid-19 ne contiennent pas de micropuces",
            reviewed=dt.date(2021, 1, 15),
            language="fr",
        ),
        claimant="Publications sur les réseaux sociaux",
        claim_date=dt.date(2021, 1, 12),
    ),
    claim_entry(
        "5G masts are spreading the coronavirus.",
        claim_review(
            "Full Fact",
            "fullfact.org",
            "https://fullfact.org/online/5g-and-coronavirus-conspiracy-theories/",
            "Incorrect. There is no evidence that 5G has anything to do with the coronavirus.",
            title="5G is not accelerating the spread of the new coronavirus",
            reviewed=dt.date(2020, 3, 31),
            language="en-GB",
        ),
        claimant="Social media posts",
        claim_date=dt.date(2020, 3, 30),
    ),
)


def google_error(code: int, status: str, message: str, reason: str = "") -> dict[str, Any]:
    """Google's error body: ``{"error": {"code", "message", "status", "details"}}``."""
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if reason:
        error["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "googleapis.com",
                "metadata": {"service": "factchecktools.googleapis.com"},
            }
        ]
    return {"error": error}


def _reply(code: int, status: str, message: str, reason: str = "") -> Reply:
    body = json.dumps(google_error(code, status, message, reason), indent=2).encode()
    return Reply(status=code, raw=body, content_type="application/json")


def api_key_invalid() -> Reply:
    """What Google answers a wrong key: 400, not 401 or 403."""
    return _reply(
        400,
        "INVALID_ARGUMENT",
        "API key not valid. Please pass a valid API key.",
        "API_KEY_INVALID",
    )


def api_not_enabled(project: str = "123456789012") -> Reply:
    """A valid key of a project where the Fact Check Tools API is off."""
    message = (
        f"Fact Check Tools API has not been used in project {project} before or it is "
        "disabled. Enable it by visiting https://console.developers.google.com/apis/api/"
        f"factchecktools.googleapis.com/overview?project={project} then retry. If you enabled "
        "this API recently, wait a few minutes for the action to propagate to our systems "
        "and retry."
    )
    return _reply(403, "PERMISSION_DENIED", message, "SERVICE_DISABLED")


def quota_exhausted() -> Reply:
    """Google's 429 (no ``Retry-After``)."""
    message = (
        "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per "
        "minute' of service 'factchecktools.googleapis.com' for consumer "
        "'project_number:123456789012'."
    )
    return _reply(429, "RESOURCE_EXHAUSTED", message, "RATE_LIMIT_EXCEEDED")


def server_error() -> Reply:
    """Google's 500."""
    return _reply(500, "INTERNAL", "Internal error encountered.")


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.casefold()) if w not in _STOPWORDS}


class FakeFactCheck(LoopbackServer):
    """``/v1alpha1/claims:search``: key checked, claims matched from :attr:`claims`."""

    path = "/v1alpha1/claims:search"

    def __init__(
        self, key: str = GOOGLE_KEY, claims: tuple[dict[str, Any], ...] = SAMPLE_CLAIMS
    ) -> None:
        super().__init__()
        self.key = key
        self.claims = list(claims)
        self.requests: list[RecordedRequest] = []
        self._script: deque[Reply] = deque()

    @property
    def base_url(self) -> str:
        """The API root a client is configured with (``.../v1alpha1``)."""
        return self.root + "/v1alpha1"

    def script(self, *replies: Reply) -> None:
        """Queue one-shot answers, given in order before any match."""
        self._script.extend(replies)

    def fail(self, reply: Reply, times: int) -> None:
        """Answer ``reply`` (an error status) to the next ``times`` requests."""
        self._script.extend([reply] * times)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_route("*", self.path, self._handle)

    def check(self, request: web.Request) -> Reply | None:
        """Refuse as Google does: a missing or wrong key, no query, a bad page size."""
        key = request.query.get("key")
        if not key:
            return _reply(
                403,
                "PERMISSION_DENIED",
                "The request is missing a valid API key.",
                "API_KEY_INVALID",
            )
        if key != self.key:
            return api_key_invalid()
        if not request.query.get("query", "").strip():
            return _reply(400, "INVALID_ARGUMENT", "Request contains an invalid argument.")
        size = request.query.get("pageSize", str(DEFAULT_PAGE_SIZE))
        if not size.isdigit():
            return _reply(
                400, "INVALID_ARGUMENT", f"Invalid value at 'page_size' (TYPE_INT32), \"{size}\""
            )
        return None

    def answer(self, query: MultiDict[str]) -> dict[str, Any]:
        """The matches for a valid request: claims sharing at least half of the query's
        words, most shared first, their reviews in ``languageCode``."""
        wanted = _words(query["query"])
        language = query.get("languageCode", "").split("-")[0].lower()
        scored = []
        for claim in self.claims:
            shared = len(wanted & _words(claim["text"]))
            if not wanted or shared < max(1, math.ceil(len(wanted) / 2)):
                continue
            reviews = [
                r
                for r in claim["claimReview"]
                if not language or r.get("languageCode", "").split("-")[0].lower() == language
            ]
            if reviews:
                scored.append((shared, {**claim, "claimReview": reviews}))
        scored.sort(key=lambda pair: -pair[0])
        size = int(query.get("pageSize", DEFAULT_PAGE_SIZE)) or DEFAULT_PAGE_SIZE
        page = [claim for _, claim in scored[:size]]
        if not page:
            return {}
        body: dict[str, Any] = {"claims": page}
        if len(scored) > size:
            body["nextPageToken"] = f"CA{size}"
        return body

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(
            RecordedRequest(
                method=request.method,
                path=request.path,
                query=MultiDict(request.query),
                headers=CIMultiDictProxy(CIMultiDict(request.headers)),
            )
        )
        reply = self.check(request)
        if reply is None and self._script:
            reply = self._script.popleft()
        if reply is None:
            reply = Reply(body=self.answer(MultiDict(request.query)))
        raw = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
        return web.Response(
            status=reply.status,
            body=raw,
            headers=dict(reply.headers),
            content_type=reply.content_type,
        )
