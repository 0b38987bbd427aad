"""What the chat bots show, before any platform markup: the verdict card, the
Debate / Evidence / Claims sections, progress lines, error sentences, and the
splitting of long text into messages.

Everything here is plain text. Model-written strings are passed through as they
are; each platform renderer escapes them for its own markup (Telegram HTML,
Discord markdown).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from storage.limits import BusyError, RateLimitedError
from storage.rows import CheckRow
from storage.service import CheckFailedError, Outcome
from zofia_engine.errors import InvalidPostError
from zofia_engine.post import ProgressEvent
from zofia_engine.report import Report

from .terminal_report import describe_event

__all__ = [
    "SECTION_KINDS",
    "VERDICTS",
    "Block",
    "Link",
    "Section",
    "VerdictCard",
    "card_from_store",
    "error_sentence",
    "pack",
    "progress_lines",
    "section",
    "split_text",
    "verdict_card",
]

#: verdict → (icon, words, colour as 0xRRGGBB)
VERDICTS: dict[str, tuple[str, str, int]] = {
    "real": ("✅", "Likely real", 0x2E7D32),
    "fake": ("❌", "Likely fake", 0xC62828),
    "undetermined": ("❔", "Undetermined", 0xF9A825),
}
SECTION_KINDS = ("debate", "evidence", "claims")
MAX_LINKS = 3


@dataclass(frozen=True)
class Link:
    title: str
    url: str


@dataclass(frozen=True)
class VerdictCard:
    """The compact answer to a check, as plain text fields.

    ``confidence`` is ``"87%"``, or ``""`` when the backend gave no
    probabilities; ``repeat_note`` is ``""`` unless the answer came from the store.
    """

    check_id: str
    verdict: str
    icon: str
    headline: str
    colour: int
    confidence: str
    summary: str
    links: tuple[Link, ...]
    origin: str
    published: dt.date | None
    repeat_note: str
    notes: tuple[str, ...]


def _strongest_links(report: Report) -> tuple[Link, ...]:
    """The evidence the verdict leans on most: cited by the debaters arguing for the
    verdict (twice the weight), by the other side, or quoted by a claim verifier."""
    winning = {"real": "pro", "fake": "con"}.get(report.verdict)
    weight: Counter[str] = Counter()
    for turn in report.debate.turns:
        for cited in turn.cites:
            weight[cited] += 2 if turn.side == winning else 1
    for claim in report.claims:
        for quote in claim.quotes:
            weight[quote.evidence_id] += 1
    linked = [item for item in report.evidence if item.url]
    order = {item.id: position for position, item in enumerate(linked)}
    linked.sort(key=lambda item: (-weight[item.id], item.source != "web", order[item.id]))
    return tuple(Link(item.title or item.url, item.url) for item in linked[:MAX_LINKS])


def _notes(report: Report) -> tuple[str, ...]:
    notes = []
    debate = report.debate
    if debate.forced and debate.held:
        notes.append(
            f"The judge did not decide within {debate.max_rounds} rounds; the ruling was forced."
        )
    if not any(item.source == "web" for item in report.evidence):
        notes.append("No web evidence: web search is off or found nothing.")
    failed, steps = _failed_steps(report)
    if failed:
        # One plain sentence: what failed, in words a backend wrote (hosts, ports, error
        # bodies), stays in the report and the log, not in a chat.
        notes.append(f"{failed} of {steps} analysis steps failed; the verdict used the rest.")
    return tuple(notes)


def _failed_steps(report: Report) -> tuple[int, int]:
    """How many of the panel's steps (analyses, claims, debate turns, rulings) failed."""
    statuses = [finding.status for finding in report.analyses.linguist]
    if report.analyses.expert is not None:
        statuses.append(report.analyses.expert.status)
    statuses += [claim.status for claim in report.claims]
    statuses += [turn.status for turn in report.debate.turns]
    statuses += [ruling.status for ruling in report.debate.rulings]
    return sum(status == "failed" for status in statuses), len(statuses)


def _repeat_note(kind: str | None, original_at: dt.datetime | None) -> str:
    if kind is None:
        return ""
    when = f" from {original_at.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC" if original_at else ""
    what = "Repeat" if kind == "exact" else "Near-repeat"
    return f"{what} of a check{when}."


def _card(
    check_id: str,
    report: Report,
    origin: str,
    published: dt.date | None,
    repeat_note: str,
) -> VerdictCard:
    icon, headline, colour = VERDICTS[report.verdict]
    value = report.confidence.value
    return VerdictCard(
        check_id=check_id,
        verdict=report.verdict,
        icon=icon,
        headline=headline,
        colour=colour,
        confidence="" if value is None else f"{value:.0%}",
        summary=report.summary,
        links=_strongest_links(report),
        origin=origin,
        published=published,
        repeat_note=repeat_note,
        notes=_notes(report),
    )


def verdict_card(
    outcome: Outcome, *, origin: str = "", published: dt.date | None = None
) -> VerdictCard:
    """The card for a check that just finished (or was answered from the store)."""
    note = _repeat_note(outcome.repeat_kind, outcome.original_at)
    return _card(outcome.check_id, outcome.report, origin, published, note)


def card_from_store(
    row: CheckRow, report: Report, *, original_at: dt.datetime | None = None
) -> VerdictCard:
    """The card for a stored check, e.g. after a restart; ``original_at`` dates a repeat."""
    note = _repeat_note(row.repeat_kind, original_at)
    return _card(row.id, report, row.origin, row.published, note)


@dataclass(frozen=True)
class Block:
    """One part of a section: a short heading, a body that may be long, a link."""

    heading: str
    body: str
    url: str = ""


@dataclass(frozen=True)
class Section:
    kind: str
    title: str
    blocks: tuple[Block, ...]


_SIDES = {"pro": "For (real)", "con": "Against (fake)"}


def _debate(report: Report) -> tuple[Block, ...]:
    debate = report.debate
    entries: list[tuple[int, int, Block]] = []
    for order, turn in enumerate(debate.turns):
        body = "\n\n".join(part for part in (turn.rebuttal, turn.argument) if part)
        if turn.status != "ok":
            body = f"(this turn failed: {turn.error or turn.status})"
        elif turn.cites:
            body += "\n\nCites: " + ", ".join(turn.cites)
        heading = f"Round {turn.round} · {_SIDES[turn.side]}"
        entries.append((turn.round, order, Block(heading, body)))
    for ruling in debate.rulings:
        decision = ruling.decision or "no ruling"
        forced = " (forced at the round limit)" if ruling.forced else ""
        body = ruling.reason if ruling.status == "ok" else f"(failed: {ruling.error})"
        heading = f"Round {ruling.round} · Judge: {decision}{forced}"
        entries.append((ruling.round, len(debate.turns) + ruling.round, Block(heading, body)))
    entries.sort(key=lambda entry: entry[:2])
    return tuple(block for *_, block in entries)


def _evidence(report: Report) -> tuple[Block, ...]:
    blocks = []
    for item in report.evidence:
        date = f", {item.published.isoformat()}" if item.published else ""
        heading = f"[{item.id}] {item.title} ({item.provider}{date})"
        blocks.append(Block(heading, item.text, item.url))
    return tuple(blocks)


def _claims(report: Report) -> tuple[Block, ...]:
    blocks = []
    for claim in report.claims:
        kind = "Core claim" if claim.kind == "core" else "Sub-claim"
        label = claim.label or claim.status
        parts = [claim.text]
        if claim.reason or claim.error:
            parts.append(claim.reason or claim.error)
        parts.extend(f"“{quote.text}” ({quote.evidence_id})" for quote in claim.quotes)
        blocks.append(Block(f"{kind} · {label}", "\n\n".join(parts)))
    return tuple(blocks)


_EMPTY = {
    "debate": "The debate did not run for this check.",
    "evidence": "No evidence was retrieved for this post.",
    "claims": "No claims were extracted from this post.",
}
_TITLES = {"debate": "Debate", "evidence": "Evidence", "claims": "Claims"}
_BUILDERS: dict[str, Callable[[Report], tuple[Block, ...]]] = {
    "debate": _debate,
    "evidence": _evidence,
    "claims": _claims,
}


def section(kind: str, report: Report) -> Section:
    """The Debate, Evidence or Claims section of a report.

    Raises:
        ValueError: ``kind`` is not one of :data:`SECTION_KINDS`.
    """
    if kind not in _BUILDERS:
        raise ValueError(f"unknown section {kind!r}; choose one of {', '.join(SECTION_KINDS)}")
    blocks = _BUILDERS[kind](report) or (Block("Nothing here", _EMPTY[kind]),)
    return Section(kind, _TITLES[kind], blocks)


# Paragraphs, then lines, then sentences, then words: (pattern, what joins the pieces).
_CUTS = (
    (re.compile(r"\n\s*\n"), "\n\n"),
    (re.compile(r"\n"), "\n"),
    (re.compile(r"(?<=[.!?…])\s+"), " "),
    (re.compile(r"\s+"), " "),
)


def _hard_cut(text: str, limit: int, measure: Callable[[str], int]) -> list[str]:
    pieces = []
    while text:
        low, high = 1, len(text)
        while low < high:  # the longest prefix that fits (measure grows with length)
            middle = (low + high + 1) // 2
            if measure(text[:middle]) <= limit:
                low = middle
            else:
                high = middle - 1
        pieces.append(text[:low])
        text = text[low:]
    return pieces


def split_text(
    text: str, limit: int, measure: Callable[[str], int] = len, *, _level: int = 0
) -> list[str]:
    """Cut ``text`` into pieces with ``measure(piece) <= limit``, at paragraph
    boundaries where possible, then at lines, sentences and words, and only as a
    last resort inside a word.

    ``measure`` is the length the platform counts, e.g. the length after
    escaping for HTML.

    Raises:
        ValueError: ``limit`` is below 1.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    if measure(text) <= limit:
        return [text] if text else []
    if _level == len(_CUTS):
        return _hard_cut(text, limit, measure)
    pattern, joiner = _CUTS[_level]
    pieces: list[str] = []
    current = ""
    for unit in pattern.split(text):
        if not unit:
            continue
        candidate = f"{current}{joiner}{unit}" if current else unit
        if measure(candidate) <= limit:
            current = candidate
            continue
        if current:
            pieces.append(current)
        if measure(unit) <= limit:
            current = unit
        else:
            *done, current = split_text(unit, limit, measure, _level=_level + 1)
            pieces.extend(done)
    if current:
        pieces.append(current)
    return pieces


def pack(
    parts: Sequence[str],
    limit: int,
    sep: str = "\n\n",
    measure: Callable[[str], int] = len,
) -> list[str]:
    """Join rendered ``parts`` into as few messages as keeping their order allows,
    each with ``measure(message) <= limit`` (Telegram counts UTF-16 units).

    Raises:
        ValueError: a part alone is longer than ``limit`` (split it first).
    """
    messages: list[str] = []
    current = ""
    for part in parts:
        if measure(part) > limit:
            raise ValueError(
                f"a part of length {measure(part)} exceeds the limit of {limit}; split it first"
            )
        candidate = f"{current}{sep}{part}" if current else part
        if measure(candidate) <= limit:
            current = candidate
        else:
            messages.append(current)
            current = part
    if current:
        messages.append(current)
    return messages


_MARKS = {"finished": "✓", "failed": "✗", "round": "•"}


def progress_lines(events: Sequence[ProgressEvent]) -> list[str]:
    """One line per finished step, and the step now running last, e.g.
    ``✓ entity-guided retrieval finished (7 entities, 12 documents)``."""
    lines = []
    running: dict[str, ProgressEvent] = {}
    for event in events:
        if event.kind == "started":
            running[event.stage] = event
            continue
        if event.kind != "round":
            running.pop(event.stage, None)
        lines.append(f"{_MARKS[event.kind]} {describe_event(event)}")
    lines.extend(f"… {describe_event(event)}" for event in running.values())
    return lines


def _wait(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} seconds"
    if seconds < 5400:
        return f"{round(seconds / 60)} minutes"
    return f"{round(seconds / 3600)} hours"


def error_sentence(exc: BaseException) -> str:
    """One sentence a chat user can act on. What failed inside (hosts, ports, error
    bodies, key fragments) belongs in the log, which the caller writes."""
    if isinstance(exc, BusyError):
        return str(exc)
    if isinstance(exc, RateLimitedError):
        return f"Too many checks for now: please try again in {_wait(exc.retry_after_s)}."
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
