"""No way of reaching anyone that the evidence does not carry, in anything a model wrote.

A post, a page of the evidence or a reader's question can tell a model to hand out an
address ("claim your refund at t.me/…", "call +44 …"), and a model that obeys writes it
into its reason, its argument or its answer, which a card then shows to a whole group.
:func:`without_contacts` takes out every link, handle (``@name``, ``t.me/name``),
e-mail address and phone number of a text unless it is one of the evidence's URLs or
that URL's site. :func:`report_without_contacts` applies it to every text of a report
that a model wrote (the summary, the lean's "what would settle it", the debate, the
rulings, the analyses, the readings, what the vision role saw), at the one door every report
leaves the engine by (:meth:`zofia_engine.engine.Engine.check`); the follow-up answer
goes through it too (:mod:`zofia_engine.agents.follow_up`). What the post, the evidence
and the claims read off the post say is data, and stays as it is; so does triage's
warning, whose signs name what a scam post carries ("look-alike domain
paypa1-secure.com").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from .report import EvidenceItem, Report

__all__ = ["PROSE_FIELDS", "report_without_contacts", "without_contacts"]

#: the fields of a report's records that hold a model's own words
PROSE_FIELDS = frozenset(
    {
        "summary",
        "settle",
        "rebuttal",
        "argument",
        "reason",
        "analysis",
        "knowledge_concordance",
        "logical_integrity",
        "description",
        "miscaption_reason",
        "tampering_reason",
    }
)
#: the parts of a report that hold what others wrote (the evidence, the post's images'
#: text, the claims and quotes read off the post), and triage's warning, whose signs name
#: what a scam post carries ("look-alike domain paypa1-secure.com"): never changed here
_DATA_FIELDS = frozenset({"evidence", "degraded", "text", "quotes", "triage"})

# A link: with a scheme or "www.", or a host with a dot and a path ("t.me/name"), or a
# bare host of two or more labels ending in letters ("scam-refund.com").
_LINK = re.compile(
    r"(?:https?://|www\.)[^\s<>\"')\]]+"
    r"|\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}(?:/[^\s<>\"')\]]*)?",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_HANDLE = re.compile(r"(?<![\w@.])@[A-Za-z0-9_]{2,32}\b")
# A run of digits with spaces, dots, dashes or brackets between them; a phone number
# when it starts with "+" and has 8 digits or more, or has 9 or more.
_DIGITS = re.compile(r"(?<![\w+])\+?\(?\d[\d\s().-]{6,}\d(?![\w])")


def _address(text: str) -> str:
    """A link folded for comparison: no scheme, no "www.", no trailing punctuation or
    slash, lower case."""
    text = re.sub(r"^(?:https?://)?(?:www\.)?", "", text.strip().casefold())
    return text.rstrip(".,;:!?/")


def _allowed(evidence: Sequence[EvidenceItem]) -> set[str]:
    """The evidence's URLs and their sites, folded as :func:`_address` folds a link."""
    allowed = set()
    for item in evidence:
        if not item.url:
            continue
        allowed.add(_address(item.url))
        host = urlsplit(item.url if "://" in item.url else f"//{item.url}").hostname
        if host:
            allowed.add(_address(host))
    return allowed


def _phone(found: re.Match[str]) -> bool:
    digits = sum(c.isdigit() for c in found[0])
    return digits >= 9 or (found[0].startswith("+") and digits >= 8)


def without_contacts(text: str, evidence: Sequence[EvidenceItem]) -> str:
    """``text`` without the links, handles, e-mail addresses and phone numbers that are
    not an evidence item's URL (or its site), its spacing tidied where one was taken
    out; ``text`` itself when it has none."""
    allowed = _allowed(evidence)
    taken = 0

    def out(keep: bool, found: str) -> str:
        nonlocal taken
        taken += not keep
        return found if keep else " "

    kept = _EMAIL.sub(lambda m: out(False, m[0]), text)
    kept = _LINK.sub(lambda m: out(_address(m[0]) in allowed, m[0]), kept)
    kept = _HANDLE.sub(lambda m: out(False, m[0]), kept)
    kept = _DIGITS.sub(lambda m: out(not _phone(m), m[0]), kept)
    if not taken:
        return text
    kept = re.sub(r"[ \t]+([.,;:!?])", r"\1", kept)
    kept = re.sub(r"\(\s*\)|\[\s*\]", " ", kept)
    return "\n".join(" ".join(line.split()) for line in kept.splitlines()).strip()


def _cleaned(value: Any, evidence: Sequence[EvidenceItem]) -> Any:
    """``value`` (a record, a list of them, or anything else) with the model's words in
    it (:data:`PROSE_FIELDS`) without contacts."""
    if isinstance(value, list):
        return [_cleaned(item, evidence) for item in value]
    if not isinstance(value, BaseModel):
        return value
    update: dict[str, Any] = {}
    for name in type(value).model_fields:
        if name in _DATA_FIELDS:
            continue
        field = getattr(value, name)
        if isinstance(field, str) and name in PROSE_FIELDS:
            cleaned: Any = without_contacts(field, evidence)
        else:
            cleaned = _cleaned(field, evidence)
        if cleaned is not field and cleaned != field:
            update[name] = cleaned
    return value.model_copy(update=update) if update else value


def report_without_contacts(report: Report) -> Report:
    """``report`` with every text a model wrote in it (:data:`PROSE_FIELDS`; triage's
    warning aside) without the contacts its evidence does not carry."""
    cleaned: Report = _cleaned(report, report.evidence)
    return cleaned
