"""The words a chat reader gets: one sentence when a check cannot be answered, the
small rules of counting and listing, and how a source is named (by its title and site,
never by the id the panel cites it by).

The sentences are said in the chat's language: each takes the chat's
:class:`~.words.Words` (English when none is given)."""

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
from .words import ENGLISH, N_, Words

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


def source_site(item: EvidenceItem, words: Words = ENGLISH) -> str:
    """Where a source is from: "reuters.com", "Wikipedia", "PolitiFact"; ``""`` for a
    finding on the post's picture, or a page with no address."""
    if item.source == "factcheck":
        return item.publisher or item.provider or words("a fact-checker")
    if item.source == "image":
        return ""
    return "Wikipedia" if item.source == "wikipedia" else _site(item)


def source_name(item: EvidenceItem, words: Words = ENGLISH) -> str:
    """A source in a few words: "reuters.com", "Wikipedia (Springfield)", "PolitiFact",
    "the post's picture"."""
    title = " ".join(item.title.split())
    if item.source == "image":
        return words("the post's picture")
    if item.source == "wikipedia":
        return f"Wikipedia ({title})" if title else "Wikipedia"
    return source_site(item, words) or title or words("a web page")


def source_label(item: EvidenceItem, words: Words = ENGLISH) -> str:
    """A source by its title and where it is from: "Mayor signs no ban (reuters.com)"."""
    title = " ".join(item.title.split())
    if item.source == "image":
        return title or words("a finding on the post's picture")
    where = source_site(item, words)
    if not title or not where or where.casefold() in title.casefold():
        return title or where or words("a web page")
    return f"{title} ({where})"


def cite_line(item: EvidenceItem) -> str:
    """A source by its title and site, then its address when it may be linked."""
    url = safe_url(item.url)
    return f"{source_label(item)}: {url}" if url else source_label(item)


# An evidence id as the panel writes it in its text: "web-3", "[wiki-1]", "img-1-label".
_EVIDENCE_ID = re.compile(r"\[?\b((?:web|wiki|fc)-\d+|img-\d+(?:-[a-z]+)*)\b\]?")


def named_sources(text: str, evidence: list[EvidenceItem], words: Words = ENGLISH) -> str:
    """``text`` (a model's) with each evidence id it mentions replaced by its source's
    name; an id that names no source of the check is left as it is."""
    by_id = {item.id: item for item in evidence}

    def name(found: re.Match[str]) -> str:
        item = by_id.get(found[1])
        return source_name(item, words) if item is not None else found[0]

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


def error_sentence(exc: BaseException, words: Words = ENGLISH) -> str:
    """One sentence a chat user can act on. What failed inside (hosts, ports, error
    bodies, key fragments) belongs in the log, which the caller writes. A busy service's
    and a refused post's own sentences are said as they are (English)."""
    if isinstance(exc, BusyError):
        return str(exc)
    if isinstance(exc, RateLimitedError):
        wait = wait_words(exc.retry_after_s)
        return words("Too many checks for now: please try again in {wait}.", wait=wait)
    if isinstance(exc, InvalidPostError):
        return str(exc)
    if isinstance(exc, CheckFailedError):
        return words(
            "The check could not finish: a service it relies on failed. The bot's operator "
            "can see why in the log; please try again later."
        )
    if isinstance(exc, asyncio.CancelledError):
        return words("The check was cancelled.")
    return words("Something went wrong on our side; the error was logged.")


#: what a sticker, a voice message, a video or any other input the bot cannot read gets
#: (said with ``words(UNSUPPORTED_INPUT)`` where the chat's language is known)
UNSUPPORTED_INPUT = N_(
    "I can check text, links and photos (a screenshot too), not this kind of message: "
    "send the post's text, a link to it, or a picture of it."
)
_COOLDOWNS = {
    "group": N_(
        "Checks in this group are spaced out and the last one started moments ago: "
        "please try again in {wait}."
    ),
    "server": N_(
        "Checks in this server are spaced out and the last one started moments ago: "
        "please try again in {wait}."
    ),
    "chat": N_(
        "Checks in this chat are spaced out and the last one started moments ago: "
        "please try again in {wait}."
    ),
}


def cooldown_sentence(left_s: float, where: str = "group", words: Words = ENGLISH) -> str:
    """A request in a chat whose cooldown since its last check is not over yet;
    ``where`` is ``"group"``, ``"server"`` or ``"chat"``."""
    return words(_COOLDOWNS[where], wait=wait_words(left_s))


def refusals_sentence(count: int, retry_after_s: float, words: Words = ENGLISH) -> str:
    """One answer for ``count`` posts a limit refused moments apart."""
    return words.plural(
        "Too many checks for now: {count} post was not checked. Please send it again in {wait}.",
        "Too many checks for now: {count} posts were not checked. "
        "Please send them again in {wait}.",
        count,
        wait=wait_words(retry_after_s),
    )
