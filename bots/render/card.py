"""The verdict card: what every front-end shows first, before any platform markup.

Everything here is plain text. Model-written strings are passed through as they
are; each renderer escapes them for its own markup (Telegram HTML, Discord
markdown, the terminal's rich text). The card's own words (the verdict's name, its
fixed sentences) are in the chat's language: a card is made with the chat's
:class:`~.words.Words` and carries them, so that its renderer's labels match.

The card's fixed sentences about a report are in :mod:`.card_notes`, and the arrow runs
one way: this module puts them on the card, and they know nothing of it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from dataclasses import dataclass, field

from bots.service.records import Outcome
from zofia_engine.report import EvidenceItem, Report

from .card_notes import (
    SHORT_NAMES,
    checked_line,
    checks_left_line,
    cut_note,
    failed_steps,
    image_notes,
    lean_line,
    no_web_note,
    read_line,
    repeat_note,
    settle_note,
    sources_line,
)
from .sentences import named_sources
from .words import ENGLISH, N_, Words

__all__ = [
    "MAX_LINKS",
    "VERDICTS",
    "Link",
    "VerdictCard",
    "report_card",
    "review_note",
    "top_evidence",
    "verdict_card",
]

#: verdict → (icon, words, colour as 0xRRGGBB); "unproven" is said as plainly as "false".
#: The words are English: a card says them with ``words(…)`` in the chat's language.
VERDICTS: dict[str, tuple[str, str, int]] = {
    "true": ("✅", N_("True"), 0x2E7D32),
    "false": ("❌", N_("False"), 0xC62828),
    "misleading": ("⚠️", N_("Misleading: missing context"), 0xEF6C00),
    "unproven": ("❔", N_("Unproven"), 0x546E7A),
    "undetermined": ("⏸️", N_("No verdict"), 0xF9A825),
    "no_claim": ("💬", N_("Nothing to fact-check"), 0x9E9E9E),
    "satire": ("🎭", N_("Satire"), 0x8E24AA),
    "scam": ("🚨", N_("Looks like a scam"), 0xB71C1C),
}
# Which debaters argued for a verdict (their citations weigh twice).
_SIDES_FOR = {
    "true": ("pro", "politician"),
    "false": ("con", "scientist"),
    "misleading": ("con", "scientist"),
}
MAX_LINKS = 3
#: the early card's line: the verdict is final, the debate is still being written
EXPLANATION_FOLLOWS = N_(
    "The evidence has decided this verdict; the panel's explanation follows here."
)


@dataclass(frozen=True)
class Link:
    title: str
    url: str


@dataclass(frozen=True)
class VerdictCard:
    """The compact answer to a check, as plain text fields.

    ``confidence`` is ``"87%"``, or ``""`` when the backend gave no
    probabilities; ``lean`` says in one short line, for an unproven post, which way the
    panel leaned (what would settle it is among the ``notes``); ``checked_by`` has a
    line per published fact-check of the post ("Already checked by PolitiFact
    (2024-03-02): False"); ``repeat_note`` is ``""`` unless the answer came from the
    store; ``checked`` says, for an image post, what was checked ("Checked: the caption
    and the text in 1 image"), and ``read`` the first words read from its image
    ("Read from the image: “…”"; the image's own text, escaped by each renderer).
    ``complete`` is false on the early card of a verdict the evidence decided before the
    debate (:attr:`Report.complete <zofia_engine.report.Report.complete>`): it says the
    explanation follows, and its renderers show no buttons until it does. ``words`` are
    the fixed words it was made with (the chat's language), for its
    renderer's labels.
    """

    check_id: str
    verdict: str
    icon: str
    headline: str
    colour: int
    confidence: str
    summary: str
    lean: str
    links: tuple[Link, ...]
    origin: str
    published: dt.date | None
    repeat_note: str
    notes: tuple[str, ...]
    checked_by: tuple[Link, ...] = ()
    checked: str = ""
    read: str = ""
    complete: bool = True
    words: Words = field(default=ENGLISH, compare=False)


def top_evidence(report: Report, count: int = MAX_LINKS) -> list[EvidenceItem]:
    """The linked evidence the verdict leans on most: cited by the debaters arguing for
    the verdict (twice the weight), by the other side, or quoted by a claim verifier;
    web pages before Wikipedia, then in retrieval order."""
    winning = _SIDES_FOR.get(report.verdict, ())
    weight: Counter[str] = Counter()
    for turn in report.debate.turns:
        for cited in turn.cites:
            weight[cited] += 2 if turn.side in winning else 1
    for claim in report.claims:
        for quote in claim.quotes:
            weight[quote.evidence_id] += 1
    linked = [item for item in report.evidence if item.url]
    order = {item.id: position for position, item in enumerate(linked)}
    linked.sort(key=lambda item: (-weight[item.id], item.source != "web", order[item.id]))
    return linked[:count]


def _notes(report: Report, words: Words) -> tuple[str, ...]:
    notes = [*cut_note(report.notes, words), *image_notes(report, words)]
    notes[:0] = review_note(report, words)
    if not report.complete:
        notes.insert(0, words(EXPLANATION_FOLLOWS))
    if report.triage is not None and report.triage.signs:
        notes.append(words("Signs: {signs}.", signs="; ".join(report.triage.signs)))
    if report.verdict in ("no_claim", "satire", "scam"):
        return tuple(notes)
    notes += settle_note(report, words)
    debate = report.debate
    # Only a debate that ran to its round limit was cut short; one that stopped because
    # nothing could change the verdict, or both sides only repeated themselves, was not.
    if debate.forced and debate.held and not debate.stopped_by:
        notes.append(
            words.plural(
                "The judge did not decide within {count} round; the ruling was forced.",
                "The judge did not decide within {count} rounds; the ruling was forced.",
                debate.max_rounds,
            )
        )
    if not any(item.source == "web" for item in report.evidence):
        notes.append(no_web_note(report, words))
    failed, steps = failed_steps(report)
    if failed:
        # One plain sentence: what failed, in words a backend wrote (hosts, ports, error
        # bodies), stays in the report and the log, not in a chat.
        notes.append(
            words.plural(
                "{failed} of {count} analysis step failed; the verdict used the rest.",
                "{failed} of {count} analysis steps failed; the verdict used the rest.",
                steps,
                failed=words.number(failed),
            )
        )
    return tuple(notes)


_REVIEWED = {
    True: (
        N_("Reviewed by the service's reviewers."),
        N_("Reviewed by the service's reviewers: {note}"),
        N_("Changed by the service's reviewers from {machine} to {verdict}."),
        N_("Changed by the service's reviewers from {machine} to {verdict}: {note}"),
    ),
    False: (
        N_("Reviewed by this chat's moderators."),
        N_("Reviewed by this chat's moderators: {note}"),
        N_("Changed by this chat's moderators from {machine} to {verdict}."),
        N_("Changed by this chat's moderators from {machine} to {verdict}: {note}"),
    ),
}


def review_note(report: Report, words: Words = ENGLISH) -> list[str]:
    """A review in force, beside the machine's verdict, saying whose it is: "Reviewed by
    this chat's moderators" (a confirmation) or "Changed by the service's reviewers from
    False to True: …"."""
    mark = report.review
    if mark is None:
        return []
    machine, verdict = words(SHORT_NAMES[mark.machine]), words(SHORT_NAMES[mark.verdict])
    confirmed, with_note, changed, changed_note = _REVIEWED[mark.everywhere]
    if mark.confirmed:
        said = words(with_note, note=mark.note) if mark.note else words(confirmed)
    elif mark.note:
        said = words(changed_note, machine=machine, verdict=verdict, note=mark.note)
    else:
        said = words(changed, machine=machine, verdict=verdict)
    return [f"{said} ({mark.link})" if mark.link else said]


def report_card(check_id: str, report: Report, *, words: Words = ENGLISH) -> VerdictCard:
    """The card for ``report`` of check ``check_id``, in ``words`` (the chat's language);
    where the post came from and whether it repeats an earlier check are the post's,
    not the report's: :func:`verdict_card` adds them."""
    icon, headline, colour = VERDICTS[report.verdict]
    value = report.confidence.value
    return VerdictCard(
        check_id=check_id,
        verdict=report.verdict,
        icon=icon,
        headline=words(headline),
        colour=colour,
        confidence="" if value is None else words.percent(value),
        summary=named_sources(report.summary, report.evidence, words),
        lean=lean_line(report, words),
        links=tuple(Link(item.title or item.url, item.url) for item in top_evidence(report)),
        origin="",
        published=None,
        repeat_note="",
        notes=(*_sources_note(report, words), *_notes(report, words)),
        checked_by=tuple(_checked_by(report, words)),
        checked=checked_line(report, words),
        read=read_line(report, words),
        complete=report.complete,
        words=words,
    )


def _sources_note(report: Report, words: Words) -> list[str]:
    line = sources_line(report, words)
    return [line] if line else []


def _checked_by(report: Report, words: Words) -> list[Link]:
    """ "Already checked by PolitiFact (2024-03-02): False", linked to the review."""
    lines = []
    for item in report.evidence:
        if item.source != "factcheck":
            continue
        who, rating = item.publisher or item.provider, item.rating
        if item.published:
            when = item.published.isoformat()
            said = words(
                "Already checked by {who} ({when}): {rating}", who=who, when=when, rating=rating
            )
        else:
            said = words("Already checked by {who}: {rating}", who=who, rating=rating)
        lines.append(Link(said, item.url))
    return lines[:MAX_LINKS]


def verdict_card(
    outcome: Outcome,
    *,
    origin: str = "",
    published: dt.date | None = None,
    checks_left: int | None = None,
    words: Words = ENGLISH,
) -> VerdictCard:
    """The card for a check that just finished (or was answered from the store), in
    ``words`` (the chat's language); ``checks_left``: how many more checks the asker may
    ask for today, if known."""
    note = repeat_note(outcome.repeat_kind, outcome.original_at, words)
    card = dataclasses.replace(
        report_card(outcome.check_id, outcome.report, words=words),
        origin=origin,
        published=published,
        repeat_note=note,
    )
    left = checks_left_line(checks_left, words)
    if not left:
        return card
    at = len(_sources_note(outcome.report, words))  # after the sources' sentence
    return dataclasses.replace(card, notes=(*card.notes[:at], left, *card.notes[at:]))
