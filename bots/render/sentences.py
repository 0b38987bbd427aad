"""The words a chat reader gets: one sentence when a check cannot be answered, the
small rules of counting and listing, and how a source is named (by its title and site,
never by the id the panel cites it by).

The sentences are said in the chat's language: each takes the chat's
:class:`~.words.Words` (English when none is given)."""

from __future__ import annotations

import asyncio
import math
import re
from urllib.parse import urlsplit

from bots.service.records import CheckFailedError
from bots.service.refusals import Limit, RateLimitedError, Refusal, ReviewRefused, wait_words
from zofia_engine.errors import InvalidPostError
from zofia_engine.report import EvidenceItem
from zofia_engine.text import counted

from .links import safe_url
from .post_refusals import post_refusal
from .words import ENGLISH, N_, Words

__all__ = [
    "CITED_WORDS",
    "INTERRUPTED",
    "OVERDUE",
    "RESTARTING",
    "UNSUPPORTED_INPUT",
    "cite_line",
    "cooldown_reason",
    "cooldown_sentence",
    "counted",
    "error_sentence",
    "listed",
    "named_sources",
    "passage_once",
    "refusal_reason",
    "refusal_sentence",
    "refusals_sentence",
    "review_refusal",
    "source_label",
    "source_name",
    "source_site",
    "waiting_sentence",
]

#: what a debater may cite besides a source, by who said it
CITED_WORDS = {
    "post": N_("the post"),
    "linguist": N_("the linguist"),
    "expert": N_("the domain expert"),
    "claims": N_("the claims as read"),
    "tree": N_("the tree of claims"),
    "stances": N_("each source's stance"),
}


def listed(items: list[str], joiner: str = "and") -> str:
    """``items`` as a reader lists them: "a", "a and b", "a, b and c"."""
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {joiner} {items[-1]}"


#: the schemes of an address a source may be named by (its site) and linked to
WEB_SCHEMES = ("http", "https")


def _site(item: EvidenceItem, words: Words) -> str:
    """The site a document is from: its rated domain, else its address's host; an
    address of any scheme but http(s) (``javascript:``, ``data:``, a corpus id) is
    "unknown source", whatever it says."""
    if not item.url.strip():
        return ""
    try:
        parts = urlsplit(item.url.strip())
        host = parts.hostname or ""
    except ValueError:
        return words("unknown source")
    if parts.scheme.lower() not in WEB_SCHEMES or not host:
        return words("unknown source")
    if item.credibility is not None and item.credibility.domain:
        return item.credibility.domain
    return host.removeprefix("www.")


def source_site(item: EvidenceItem, words: Words = ENGLISH) -> str:
    """Where a source is from: "reuters.com", "Wikipedia", "PolitiFact"; "unknown
    source" for a page whose address is not a web one; ``""`` for a finding on the
    post's image, or a page with no address."""
    if item.source == "factcheck":
        return item.publisher or item.provider or words("a fact-checker")
    if item.source == "image":
        return ""
    return "Wikipedia" if item.source == "wikipedia" else _site(item, words)


def source_name(item: EvidenceItem, words: Words = ENGLISH) -> str:
    """A source in a few words: "reuters.com", "Wikipedia (Springfield)", "PolitiFact",
    "the post's image"."""
    title = " ".join(item.title.split())
    if item.source == "image":
        return words("the post's image")
    if item.source == "wikipedia":
        return f"Wikipedia ({title})" if title else "Wikipedia"
    return source_site(item, words) or title or words("a web page")


def source_label(item: EvidenceItem, words: Words = ENGLISH) -> str:
    """A source by its title and where it is from: "Mayor signs no ban (reuters.com)"."""
    title = " ".join(item.title.split())
    if item.source == "image":
        return title or words("a finding on the post's image")
    where = source_site(item, words)
    if not title or not where or where.casefold() in title.casefold():
        return title or where or words("a web page")
    return f"{title} ({where})"


def cite_line(item: EvidenceItem, words: Words = ENGLISH) -> str:
    """A source by its title and site, then its address when it may be linked."""
    url, label = safe_url(item.url), source_label(item, words)
    return f"{label}: {url}" if url else label


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
_WORD = re.compile(r"\w+")
#: the fewest words an opening said twice in a row must have to be said once
_MIN_REPEAT = 4


def _words(text: str) -> tuple[str, ...]:
    """The words of ``text``, case folded: what a passage says, whatever its punctuation."""
    return tuple(word.casefold() for word in _WORD.findall(text))


def _within(run: tuple[str, ...], words: tuple[str, ...]) -> bool:
    """Whether ``run`` comes whole, in order, in ``words``."""
    size = len(run)
    return any(words[at : at + size] == run for at in range(len(words) - size + 1))


def _opening_once(text: str) -> str:
    """``text`` without the second copy of an opening said twice in a row ("A page. A
    page." or "A page A page"), the punctuation between them whatever it is: a page's
    snippet and its description, both its whole text, joined."""
    found = list(_WORD.finditer(text))
    keys = [match[0].casefold() for match in found]
    for size in range(len(keys) // 2, _MIN_REPEAT - 1, -1):  # the longest first
        if keys[:size] == keys[size : 2 * size]:
            tail = text[found[2 * size - 1].end() :]  # after the second copy
            if not tail.strip():  # nothing: the first copy, with its own last stop
                return text[: found[size].start()].rstrip()
            return text[: found[size - 1].end()] + tail
    return text


def passage_once(text: str) -> str:
    """A document's text with each passage once, whatever its punctuation: an opening
    said twice in a row is said once, a sentence said again is left out, and so is a
    snippet cut with "…" whose words come again whole."""
    pieces = _SENTENCE_END.split(_opening_once(text.strip()))
    sentences, spaces = pieces[0::2], ["", *pieces[1::2]]
    kept: list[str] = []
    seen: set[tuple[str, ...]] = set()
    for n, (space, sentence) in enumerate(zip(spaces, sentences, strict=True)):
        stem = _words(sentence)
        if not stem or stem in seen:
            continue
        if sentence.endswith(("…", "...")):
            rest = " ".join(other for m, other in enumerate(sentences) if m != n)
            if _within(stem, _words(rest)):
                continue
        seen.add(stem)
        kept.append((space if kept else "") + sentence)
    return "".join(kept)


#: what a request that comes while the bot shuts down is told, and one it had taken but
#: not yet submitted when the grace ran out (nothing of it is kept)
RESTARTING = N_("The bot is restarting; please send it again in a minute.")
#: what a check the shutdown's grace cut short is told: it goes back to the queue and
#: resumes at the next start, so the post sent again then is answered from the store
INTERRUPTED = N_(
    "The bot restarted before this check finished. It will resume; send the post again "
    "in a few minutes to get the answer."
)
#: what a request not answered within ``[service] answer_within_s`` is told (its wait is
#: given up: see :func:`bots.chat.check_flow.run_check`)
OVERDUE = N_(
    "This check is taking far longer than it should, so I have stopped waiting for it. "
    "Please send the post again later."
)


def error_sentence(exc: BaseException, words: Words = ENGLISH) -> str:
    """One sentence a chat user can act on. What failed inside (hosts, ports, error
    bodies, key fragments) belongs in the log, which the caller writes. A limit's
    refusal says which limit and when it frees up (:func:`refusal_sentence`); the engine's
    refusal of a post is worded from its kind (:func:`~.post_refusals.post_refusal`)."""
    if isinstance(exc, RateLimitedError):
        return refusal_sentence(exc.refusal, words)
    if isinstance(exc, InvalidPostError):
        return post_refusal(exc, words)
    if isinstance(exc, CheckFailedError):
        return words(
            "The check could not finish: a service it relies on failed. The bot's operator "
            "can see why in the log; please try again later."
        )
    if isinstance(exc, asyncio.CancelledError):
        return words("The check was cancelled.")
    return words("Something went wrong on our side; the error was logged.")


#: why a review was refused, in English (what a moderator typed is theirs to fix)
_REVIEW_REFUSED = {
    "chat_reviews_off": "Reviews by a chat's moderators are off on this bot.",
    "unknown_verdict": "The verdict must be true, false, misleading or unproven.",
    "note_too_long": "The note is too long: at most {limit} characters.",
    "link_too_long": "The link is too long: at most {limit} characters.",
    "not_a_link": "The link must be an http(s) address.",
    "no_verdict": "This check has no verdict to review yet.",
    "scam_called_true": "Only the service's reviewers may call a likely scam true.",
}


def review_refusal(exc: ReviewRefused, words: Words = ENGLISH) -> str:
    """Why a review was refused, as one sentence: a limit in ``words`` with when one may
    be saved; a note, link or verdict the rules refuse in English."""
    if exc.kind in ("reviewer_limit", "check_limit"):
        minutes = words.number(max(1, math.ceil(exc.retry_after_s / 60)))
        return words("Too many reviews for now: try again in {minutes} min.", minutes=minutes)
    return _REVIEW_REFUSED[exc.kind].format(limit=exc.limit)


def _counted_reason(refusal: Refusal, words: Words) -> str:
    """Why a limit with a number refused a request (a rate, a quota, a queue)."""
    n, limit = refusal.count, refusal.limit
    if not n:  # a caller that named no limit
        return words("Too many checks for now.")
    if limit is Limit.USER_RATE:
        return words.plural(
            "You have asked for {count} check in the last minute, the most one person may.",
            "You have asked for {count} checks in the last minute, the most one person may.",
            n,
        )
    if limit is Limit.CHAT_RATE:
        return words.plural(
            "This chat has asked for {count} check in the last minute, the most a chat may.",
            "This chat has asked for {count} checks in the last minute, the most a chat may.",
            n,
        )
    if limit is Limit.USER_DAILY:
        return words.plural(
            "You have asked for {count} check in the last 24 hours, the most one person may.",
            "You have asked for {count} checks in the last 24 hours, the most one person may.",
            n,
        )
    if limit is Limit.CHAT_DAILY:
        return words.plural(
            "This chat has asked for {count} check in the last 24 hours, the most a chat may.",
            "This chat has asked for {count} checks in the last 24 hours, the most a chat may.",
            n,
        )
    if limit is Limit.PRIVATE_QUEUE:
        return words.plural(
            "{count} of your posts is already waiting its turn, as many as may wait.",
            "{count} of your posts are already waiting their turn, as many as may wait.",
            n,
        )
    if limit is Limit.USER_PENDING:
        return words.plural(
            "You have {count} check waiting already, your share of the bot's queue.",
            "You have {count} checks waiting already, your share of the bot's queue.",
            n,
        )
    if limit is Limit.CHAT_PENDING:
        return words.plural(
            "This chat has {count} check waiting already, its share of the bot's queue.",
            "This chat has {count} checks waiting already, its share of the bot's queue.",
            n,
        )
    return words.plural(
        "The bot is busy with {count} check, as many as it takes at once.",
        "The bot is busy with {count} checks, as many as it takes at once.",
        n,
    )


def _budget_reason(refusal: Refusal, words: Words) -> str:
    """Why a day's token budget, or a share of it, refused a request: spent (until
    midnight), or held by checks under way (until they end)."""
    limit, held = refusal.limit, refusal.held
    if limit is Limit.USER_BUDGET:
        if held:
            return words("Your checks under way hold your share of today's checking budget.")
        return words(
            "Your share of today's checking budget is spent; posts already checked are "
            "still answered."
        )
    if limit is Limit.CHAT_BUDGET:
        if held:
            return words("This chat's checks under way hold its share of today's checking budget.")
        return words(
            "This chat's share of today's checking budget is spent; posts already checked "
            "are still answered."
        )
    if held:
        return words("Checks under way hold the rest of today's checking budget.")
    return words("Today's checking budget is spent; posts already checked are still answered.")


_BUDGETS = frozenset({Limit.USER_BUDGET, Limit.CHAT_BUDGET, Limit.BUDGET})


def refusal_reason(refusal: Refusal, words: Words = ENGLISH) -> str:
    """Which limit refused a request, in one sentence of the asker's language: "You have
    asked for 3 checks in the last minute, the most one person may."."""
    if refusal.limit in _BUDGETS:
        return _budget_reason(refusal, words)
    return _counted_reason(refusal, words)


def _send_again(count: int, retry_after_s: float, words: Words) -> str:
    return words.plural(
        "Please send it again in {wait}.",
        "Please send them again in {wait}.",
        count,
        wait=wait_words(retry_after_s),
    )


def refusal_sentence(refusal: Refusal, words: Words = ENGLISH) -> str:
    """A limit's refusal of one request: which limit, and when it frees up."""
    return f"{refusal_reason(refusal, words)} {_send_again(1, refusal.retry_after_s, words)}"


#: what a sticker, a video or any other input the bot cannot read gets
#: (said with ``words(UNSUPPORTED_INPUT)`` where the chat's language is known)
UNSUPPORTED_INPUT = N_(
    "I can check text, links, images (a screenshot too) and voice notes, not this kind of "
    "message: send the post's text, a link to it, or an image of it."
)
_COOLDOWNS = {
    "group": N_("Checks in this group are spaced out, and the last one started moments ago."),
    "server": N_("Checks in this server are spaced out, and the last one started moments ago."),
    "chat": N_("Checks in this chat are spaced out, and the last one started moments ago."),
}


def cooldown_reason(where: str = "group", words: Words = ENGLISH) -> str:
    """Why a request in a chat whose cooldown since its last check is not over yet was
    refused; ``where`` is ``"group"``, ``"server"`` or ``"chat"``."""
    return words(_COOLDOWNS[where])


def cooldown_sentence(left_s: float, where: str = "group", words: Words = ENGLISH) -> str:
    """A request in a chat whose cooldown is not over yet, ``left_s`` before it is."""
    return f"{cooldown_reason(where, words)} {_send_again(1, left_s, words)}"


def refusals_sentence(count: int, reason: str, retry_after_s: float, words: Words = ENGLISH) -> str:
    """One answer for ``count`` posts refused moments apart: how many, why (the first
    refusal's ``reason``: :func:`refusal_reason`, :func:`cooldown_reason`), and when to
    send them again."""
    told = words.plural("{count} post was not checked.", "{count} posts were not checked.", count)
    return " ".join(
        part for part in (told, reason, _send_again(count, retry_after_s, words)) if part
    )


def waiting_sentence(ahead: int, words: Words = ENGLISH) -> str:
    """A request of a private chat waiting its turn behind ``ahead`` others."""
    return words.plural(
        "In line: {count} of your posts comes first, then this one.",
        "In line: {count} of your posts come first, then this one.",
        ahead,
    )
