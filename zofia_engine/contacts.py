"""No way of reaching anyone that the evidence does not carry, in anything a model wrote.

A post, a page of the evidence or a reader's question can tell a model to hand out an
address ("claim your refund at t.me/…", "call +44 …"), and a model that obeys writes it
into its reason, its argument or its answer, which a card then shows to a whole group.
The rule is inverted: in a model's text an address stays only when it is, byte for
byte, one of the evidence's URLs or that URL's host; every other token that looks like
an address goes. What looks like one is judged on the text as a reader's eye and a
client's linker see it (:mod:`.address_forms`: NFKC, format characters such as a
zero-width space removed, Unicode dashes, dots and at signs folded): any ``scheme:``
(``tg://``, ``whatsapp:``, ``mailto:``), any host with a letter top-level domain in any
script (``возврат-денег.рф``), ``[.]``, ``(dot)`` and `` dot `` spellings, e-mail
addresses, handles with any at sign, IPv4 addresses, and any run of seven digits or more
across non-letters that is not a number as prose writes one (a year, a date, ``8,848.86``).

:func:`without_contacts` applies it to one text; :func:`report_without_contacts` to every
text of a report that a model wrote (the summary, the lean's "what would settle it", the
debate, the rulings, the analyses, the readings, what the vision role saw), at the one
door every report leaves the engine by (:meth:`zofia_engine.engine.Engine.check`); the
follow-up answer goes through it too (:mod:`zofia_engine.agents.follow_up`). What the
post, the evidence and the claims read off the post say is data, and stays as it is; so
does triage's warning, whose signs name what a scam post carries ("look-alike domain
paypa1-secure.com").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from .address_forms import address_spans
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


def _allowed(evidence: Sequence[EvidenceItem]) -> set[str]:
    """The evidence's URLs and their hosts (each as written, and without ``www.``): the
    only addresses a model's text may keep, compared byte for byte."""
    allowed = set()
    for item in evidence:
        if not item.url:
            continue
        allowed.add(item.url)
        parts = urlsplit(item.url if "://" in item.url else f"//{item.url}")
        host = parts.netloc.rpartition("@")[2]
        for name in (host, parts.hostname or ""):
            if name:
                allowed |= {name, name.removeprefix("www.")}
    return allowed


def without_contacts(text: str, evidence: Sequence[EvidenceItem]) -> str:
    """``text`` without any token that looks like an address (a link, a host, a handle,
    an e-mail address, a phone number) unless it is byte for byte one of the evidence's
    URLs or their hosts; its spacing tidied where one was taken out; ``text`` itself
    when none was."""
    allowed = _allowed(evidence)
    taken = [(start, end) for start, end in address_spans(text) if text[start:end] not in allowed]
    if not taken:
        return text
    kept, at = [], 0
    for start, end in taken:
        kept += [text[at:start], " "]
        at = end
    kept.append(text[at:])
    tidy = re.sub(r"[ \t]+([.,;:!?])", r"\1", "".join(kept))
    tidy = re.sub(r"\(\s*\)|\[\s*\]", " ", tidy)
    return "\n".join(" ".join(line.split()) for line in tidy.splitlines()).strip()


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
