"""The verdict card: what every front-end shows first, before any platform markup.

Everything here is plain text. Model-written strings are passed through as they
are; each renderer escapes them for its own markup (Telegram HTML, Discord
markdown, the terminal's rich text).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass

from storage.reviews import review_of
from storage.service import Outcome
from zofia_engine.report import EvidenceItem, Report

from .sentences import counted, named_sources

__all__ = [
    "MAX_LINKS",
    "VERDICTS",
    "Link",
    "VerdictCard",
    "checks_left_line",
    "panel_steps",
    "report_card",
    "review_note",
    "sources_line",
    "top_evidence",
    "verdict_card",
]

#: verdict → (icon, words, colour as 0xRRGGBB); "unproven" is said as plainly as "false"
VERDICTS: dict[str, tuple[str, str, int]] = {
    "true": ("✅", "True", 0x2E7D32),
    "false": ("❌", "False", 0xC62828),
    "misleading": ("⚠️", "Misleading: missing context", 0xEF6C00),
    "unproven": ("❔", "Unproven", 0x546E7A),
    "undetermined": ("⏸️", "No verdict", 0xF9A825),
    "no_claim": ("💬", "Nothing to fact-check", 0x9E9E9E),
    "satire": ("🎭", "Satire", 0x8E24AA),
    "scam": ("🚨", "Looks like a scam", 0xB71C1C),
}
# Which debaters argued for a verdict (their citations weigh twice).
_SIDES_FOR = {
    "true": ("pro", "politician"),
    "false": ("con", "scientist"),
    "misleading": ("con", "scientist"),
}
MAX_LINKS = 3
#: below this many checks left today, a card says how many are left
FEW_CHECKS_LEFT = 5
#: a cited sentence longer than this is not put on the card (it is never cut)
_MAX_QUOTE = 300


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
    store; ``checked`` says, for a photo post, what was checked ("Checked: the caption
    and the text in 1 image").
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


def _lean(report: Report) -> str:
    """For an unproven post, one short line: which way the panel leaned ("The panel
    leans false (62%)."); what would settle it is a note (the summary above it says
    that the evidence settled nothing)."""
    if report.verdict != "unproven":
        return ""
    if report.lean is None:
        return "The panel leans neither way."
    strength = f" ({report.lean.probability:.0%})" if report.lean.probability is not None else ""
    words = VERDICTS[report.lean.outcome][1].split(":")[0].lower()
    return f"The panel leans {words}{strength}."


def _settle_note(report: Report) -> list[str]:
    """What would settle an unproven post, as a note under the card."""
    if report.verdict != "unproven" or report.lean is None or not report.lean.settle:
        return []
    return [f"What would settle it: {report.lean.settle}"]


def _checked(report: Report) -> str:
    """What a photo post's check read: the caption, the text in its pictures."""
    if not report.images:
        return ""
    n = len(report.images)
    pictures = f"{n} image{'s' if n > 1 else ''}"
    with_text = sum(1 for image in report.images if image.text)
    read = f"the text in {pictures}" if with_text else f"{pictures} (no text found in it)"
    return f"Checked: {'the caption and ' if report.caption else ''}{read}"


def _picture_notes(report: Report) -> list[str]:
    """The words a fact-checker would stamp, printed on a picture (they are the post's
    own words, not a rating), and where the picture appeared before."""
    notes = []
    for image in report.images:
        which = f"Picture {image.index}" if len(report.images) > 1 else "The picture"
        for hit in image.labels[:1]:
            notes.append(f'{which} carries the words "{hit.line}".')
        same = [s for s in image.sightings if s.relation == "same source"]
        if same:
            first = min(same, key=lambda s: s.published or dt.date.max)
            when = f" on {first.published.isoformat()}" if first.published else ""
            where = first.title or first.url
            notes.append(f"This photo appeared{when} at {where} ({first.url}).")
    return notes


def _notes(report: Report) -> tuple[str, ...]:
    notes = [*_cut_note(report.degraded), *_picture_notes(report)]
    notes[:0] = review_note(report)
    if report.triage is not None and report.triage.signs:
        notes.append("Signs: " + "; ".join(report.triage.signs) + ".")
    if report.verdict in ("no_claim", "satire", "scam"):
        return tuple(notes)
    notes += _settle_note(report)
    debate = report.debate
    # Only a debate that ran to its round limit was cut short; one that stopped because
    # nothing could change the verdict, or both sides only repeated themselves, was not.
    if debate.forced and debate.held and not debate.stopped_by:
        rounds = counted(debate.max_rounds, "round")
        notes.append(f"The judge did not decide within {rounds}; the ruling was forced.")
    if not any(item.source == "web" for item in report.evidence):
        notes.append(_no_web(report))
    failed, steps = _failed_steps(report)
    if failed:
        # One plain sentence: what failed, in words a backend wrote (hosts, ports, error
        # bodies), stays in the report and the log, not in a chat.
        of = f"{failed} of {counted(steps, 'analysis step')}"
        notes.append(f"{of} failed; the verdict used the rest.")
    return tuple(notes)


def review_note(report: Report) -> list[str]:
    """A moderator's review in force, beside the machine's verdict: "Reviewed by a
    moderator" (a confirmation) or "Changed by a moderator from False to True: …"."""
    mark = review_of(report)
    if mark is None:
        return []
    words = {verdict: VERDICTS[verdict][1].split(":")[0] for verdict in VERDICTS}
    said = f"Changed by a moderator from {words[mark.machine]} to {words[mark.verdict]}"
    if mark.confirmed:
        said = "Reviewed by a moderator"
    said += f": {mark.note}" if mark.note else "."
    return [f"{said} ({mark.link})" if mark.link else said]


# How the engine says that a post was cut (check_run.py, retrieval/pipeline.py). The
# report carries no field for these lengths (nor for a source left out, switched off or
# failed, read by _no_web), so its notes are read; what a field says (the steps' status,
# the debate's end, the search mode) is read from the field.
_HAD = re.compile(r"the post had ([\d,]+) characters; only its first ([\d,]+) were checked")
_SEARCHED = re.compile(r"post cut to its first ([\d,]+) characters for entity extraction")
_SAW = re.compile(r"the models saw the post's first ([\d,]+) characters")


def _number(found: re.Match[str], group: int = 1) -> str:
    return f"{int(found[group].replace(',', '')):,}"


def _cut_note(degraded: list[str]) -> list[str]:
    """When the post was cut: how long it was, how much was checked, how much of it the
    search for sources and the panel read."""
    said: list[str] = []
    for note in degraded:
        if found := _HAD.fullmatch(note):
            whole, checked = _number(found), _number(found, 2)
            said.insert(0, f"it has {whole} characters and only the first {checked} were checked")
        elif found := _SEARCHED.fullmatch(note):
            said.append(f"the search for sources read its first {_number(found)} characters")
        elif found := _SAW.fullmatch(note):
            said.append(f"the panel read its first {_number(found)} characters")
    return [f"The post was cut: {'; '.join(said)}."] if said else []


def _no_web(report: Report) -> str:
    """Why no web page is among the evidence: web search is off, it failed, or it found
    nothing (the report's notes say which)."""
    degraded = report.degraded
    if "left out for this check: web" in degraded:
        return "No web evidence: web search was left out of this check."
    if any(note.startswith("no web search backend configured") for note in degraded):
        return "No web evidence: web search is off on this bot."
    if any(note.startswith("web:") and " failed: " in note for note in degraded):
        return "No web evidence: the web search failed."
    if report.search_mode == "paper":
        return "No web evidence: the web search, which leaves out news sites, found nothing."
    return "No web evidence: the web search found nothing on this post."


def panel_steps(report: Report) -> list[tuple[str, str, str]]:
    """The panel's steps (analyses, claims, debate turns, rulings) as ``(name, status,
    error)``, in the order they ran."""
    analyses = report.analyses
    steps: list[tuple[str, str, str]] = [
        (f"linguist ({f.dimension})", f.status, f.error) for f in analyses.linguist
    ]
    if analyses.expert is not None:
        steps.append(("domain expert", analyses.expert.status, analyses.expert.error))
    steps += [(f"claim {c.id}", c.status, c.error) for c in report.claims]
    steps += [(f"round {t.round} {t.side}", t.status, t.error) for t in report.debate.turns]
    steps += [(f"round {r.round} judge", r.status, r.error) for r in report.debate.rulings]
    return steps


def _failed_steps(report: Report) -> tuple[int, int]:
    """How many of the panel's steps failed, of how many."""
    steps = panel_steps(report)
    return sum(status == "failed" for _, status, _ in steps), len(steps)


def _repeat_note(kind: str | None, original_at: dt.datetime | None) -> str:
    if kind is None:
        return ""
    when = f" from {original_at.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC" if original_at else ""
    what = "Repeat" if kind == "exact" else "Near-repeat"
    return f"{what} of a check{when}."


def report_card(
    check_id: str,
    report: Report,
    origin: str,
    published: dt.date | None,
    repeat_note: str,
) -> VerdictCard:
    """The card for ``report`` of check ``check_id``, with where the post came from."""
    icon, headline, colour = VERDICTS[report.verdict]
    value = report.confidence.value
    return VerdictCard(
        check_id=check_id,
        verdict=report.verdict,
        icon=icon,
        headline=headline,
        colour=colour,
        confidence="" if value is None else f"{value:.0%}",
        summary=named_sources(report.summary, report.evidence),
        lean=_lean(report),
        links=tuple(Link(item.title or item.url, item.url) for item in top_evidence(report)),
        origin=origin,
        published=published,
        repeat_note=repeat_note,
        notes=(*_sources_note(report), *_notes(report)),
        checked_by=tuple(_checked_by(report)),
        checked=_checked(report),
    )


def sources_line(report: Report) -> str:
    """For a false or misleading verdict the evidence settled, one sentence the sources
    say, word for word: a quote of a refuted claim the verdict rests on (the core claim
    first), as the claim verifier cited it; ``""`` when there is none."""
    if report.verdict not in ("false", "misleading"):
        return ""
    basis = set(report.basis)
    refuted = [c for c in report.claims if c.id in basis and c.label == "refutes"]
    refuted.sort(key=lambda claim: claim.kind != "core")
    for claim in refuted:
        for quote in claim.quotes:
            said = " ".join(quote.text.split())  # the same words, on one line
            if said and len(said) <= _MAX_QUOTE:
                return f"What the sources say: “{said}”"
    return ""


def _sources_note(report: Report) -> list[str]:
    line = sources_line(report)
    return [line] if line else []


def checks_left_line(left: int | None) -> str:
    """How many checks the asker has left today, when fewer than
    :data:`FEW_CHECKS_LEFT`; ``""`` otherwise (or when not known)."""
    if left is None or left >= FEW_CHECKS_LEFT:
        return ""
    if left == 0:
        return "You have no checks left today; more come as the last 24 hours' checks age."
    return f"You have {counted(left, 'check')} left today."


def _checked_by(report: Report) -> list[Link]:
    """ "Already checked by PolitiFact (2024-03-02): False", linked to the review."""
    lines = []
    for item in report.evidence:
        if item.source != "factcheck":
            continue
        when = f" ({item.published.isoformat()})" if item.published else ""
        who = item.publisher or item.provider
        lines.append(Link(f"Already checked by {who}{when}: {item.rating}", item.url))
    return lines[:MAX_LINKS]


def verdict_card(
    outcome: Outcome,
    *,
    origin: str = "",
    published: dt.date | None = None,
    checks_left: int | None = None,
) -> VerdictCard:
    """The card for a check that just finished (or was answered from the store);
    ``checks_left``: how many more checks the asker may ask for today, if known."""
    note = _repeat_note(outcome.repeat_kind, outcome.original_at)
    card = report_card(outcome.check_id, outcome.report, origin, published, note)
    left = checks_left_line(checks_left)
    if not left:
        return card
    at = len(_sources_note(outcome.report))  # after the sources' sentence, before the rest
    return dataclasses.replace(card, notes=(*card.notes[:at], left, *card.notes[at:]))
