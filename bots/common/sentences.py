"""The words a chat reader gets: one sentence when a check cannot be answered, the
small rules of counting and listing, and how a source is named (by its title and site,
never by the id the panel cites it by)."""

from __future__ import annotations

import asyncio
import re
from urllib.parse import urlsplit

from storage.limits import BusyError, RateLimitedError, wait_words
from storage.service import CheckFailedError
from zofia_engine.errors import InvalidPostError
from zofia_engine.report import EvidenceItem
from zofia_engine.text import counted

from .links import safe_url

__all__ = [
    "CITED_WORDS",
    "UNSUPPORTED_INPUT",
    "cite_line",
    "cooldown_sentence",
    "counted",
    "error_sentence",
    "listed",
    "named_sources",
    "passage_once",
    "refusals_sentence",
    "source_label",
    "source_name",
    "source_site",
]

#: what a debater may cite besides a source, by who said it
CITED_WORDS = {
    "post": "the post",
    "linguist": "the linguist",
    "expert": "the domain expert",
    "claims": "the claims as read",
    "tree": "the tree of claims",
    "stances": "each source's stance",
}


def listed(items: list[str], joiner: str = "and") -> str:
    """``items`` as a reader lists them: "a", "a and b", "a, b and c"."""
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {joiner} {items[-1]}"


def _site(item: EvidenceItem) -> str:
    """The site a document is from: its rated domain, else its address's host."""
    if item.credibility is not None and item.credibility.domain:
        return item.credibility.domain
    try:
        host = urlsplit(item.url).hostname or ""
    except ValueError:
        return ""
    return host.removeprefix("www.")


def source_site(item: EvidenceItem) -> str:
    """Where a source is from: "reuters.com", "Wikipedia", "PolitiFact"; ``""`` for a
    finding on the post's picture, or a page with no address."""
    if item.source == "factcheck":
        return item.publisher or item.provider or "a fact-checker"
    if item.source == "image":
        return ""
    return "Wikipedia" if item.source == "wikipedia" else _site(item)


def source_name(item: EvidenceItem) -> str:
    """A source in a few words: "reuters.com", "Wikipedia (Springfield)", "PolitiFact",
    "the post's picture"."""
    title = " ".join(item.title.split())
    if item.source == "image":
        return "the post's picture"
    if item.source == "wikipedia":
        return f"Wikipedia ({title})" if title else "Wikipedia"
    return source_site(item) or title or "a web page"


def source_label(item: EvidenceItem) -> str:
    """A source by its title and where it is from: "Mayor signs no ban (reuters.com)"."""
    title = " ".join(item.title.split())
    if item.source == "image":
        return title or "a finding on the post's picture"
    where = source_site(item)
    if not title or not where or where.casefold() in title.casefold():
        return title or where or "a web page"
    return f"{title} ({where})"


def cite_line(item: EvidenceItem) -> str:
    """A source by its title and site, then its address when it may be linked."""
    url = safe_url(item.url)
    return f"{source_label(item)}: {url}" if url else source_label(item)


# An evidence id as the panel writes it in its text: "web-3", "[wiki-1]", "img-1-label".
_EVIDENCE_ID = re.compile(r"\[?\b((?:web|wiki|fc)-\d+|img-\d+(?:-[a-z]+)*)\b\]?")


def named_sources(text: str, evidence: list[EvidenceItem]) -> str:
    """``text`` (a model's) with each evidence id it mentions replaced by its source's
    name; an id that names no source of the check is left as it is."""
    by_id = {item.id: item for item in evidence}

    def name(found: re.Match[str]) -> str:
        item = by_id.get(found[1])
        return source_name(item) if item is not None else found[0]

    return _EVIDENCE_ID.sub(name, text) if by_id else text


# Where a passage's sentences end ("…" too: a search snippet is cut with it).
_SENTENCE_END = re.compile(r"(?<=[.!?…])(\s+)")


def _plain(text: str) -> str:
    return " ".join(text.casefold().split())


def passage_once(text: str) -> str:
    """A document's text with each passage once: a sentence said again is left out, and
    so is a snippet cut with "…" whose words come again whole."""
    pieces = _SENTENCE_END.split(text.strip())
    sentences, spaces = pieces[0::2], ["", *pieces[1::2]]
    kept: list[str] = []
    seen: set[str] = set()
    for n, (space, sentence) in enumerate(zip(spaces, sentences, strict=True)):
        stem = _plain(sentence.strip(" .…"))
        if not stem or stem in seen:
            continue
        if sentence.endswith(("…", "...")):
            rest = " ".join(other for m, other in enumerate(sentences) if m != n)
            if stem in _plain(rest):
                continue
        seen.add(stem)
        kept.append((space if kept else "") + sentence)
    return "".join(kept)


def error_sentence(exc: BaseException) -> str:
    """One sentence a chat user can act on. What failed inside (hosts, ports, error
    bodies, key fragments) belongs in the log, which the caller writes."""
    if isinstance(exc, BusyError):
        return str(exc)
    if isinstance(exc, RateLimitedError):
        return f"Too many checks for now: please try again in {wait_words(exc.retry_after_s)}."
    if isinstance(exc, InvalidPostError):
        return str(exc)
    if isinstance(exc, CheckFailedError):
        return (
            "The check could not finish: a service it relies on failed. The bot's operator "
            "can see why in the log; please try again later."
        )
    if isinstance(exc, asyncio.CancelledError):
        return "The check was cancelled."
    return "Something went wrong on our side; the error was logged."


#: what a sticker, a voice message, a video or any other input the bot cannot read gets
UNSUPPORTED_INPUT = (
    "I can check text, links and photos (a screenshot too), not this kind of message: "
    "send the post's text, a link to it, or a picture of it."
)


def cooldown_sentence(left_s: float, where: str = "group") -> str:
    """A request in a chat whose cooldown since its last check is not over yet."""
    return (
        f"Checks in this {where} are spaced out and the last one started moments ago: "
        f"please try again in {wait_words(left_s)}."
    )


def refusals_sentence(count: int, retry_after_s: float) -> str:
    """One answer for ``count`` posts a limit refused moments apart."""
    were = "was" if count == 1 else "were"
    return (
        f"Too many checks for now: {counted(count, 'post')} {were} not checked. "
        f"Please send {'it' if count == 1 else 'them'} again in {wait_words(retry_after_s)}."
    )
