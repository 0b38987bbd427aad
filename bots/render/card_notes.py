"""The card's fixed sentences about a report: which way an unproven post leaned, what
an image post's check read, where the post was cut, why no web page is among the
evidence, a repeat, the sources' own words, the checks left today.

Each is said in the chat's language: every function takes the chat's
:class:`~.words.Words`.
"""

from __future__ import annotations

import datetime as dt

from zofia_engine.report import Note, Report
from zofia_engine.text import clip

from .words import ENGLISH, N_, Words

__all__ = [
    "FEW_CHECKS_LEFT",
    "SHORT_NAMES",
    "checked_line",
    "checks_left_line",
    "cut_note",
    "failed_steps",
    "image_notes",
    "lean_line",
    "no_web_note",
    "panel_steps",
    "read_line",
    "repeat_note",
    "settle_note",
    "sources_line",
]

#: below this many checks left today, a card says how many are left
FEW_CHECKS_LEFT = 5
#: a cited sentence longer than this is not put on the card (it is never cut)
_MAX_QUOTE = 300
#: the most of an image's text the card shows (cut at a word)
MAX_READ = 120
#: each verdict in a word or two (a moderator's review names them)
SHORT_NAMES = {
    "true": N_("True"),
    "false": N_("False"),
    "misleading": N_("Misleading"),
    "unproven": N_("Unproven"),
    "undetermined": N_("No verdict"),
    "no_claim": N_("Nothing to fact-check"),
    "satire": N_("Satire"),
    "scam": N_("Looks like a scam"),
}
_LEANS = {
    "true": N_("The panel leans true{strength}."),
    "false": N_("The panel leans false{strength}."),
    "misleading": N_("The panel leans misleading{strength}."),
}


_AGAINST = {
    "true": N_("The panel leaned true{strength}, against the evidence."),
    "false": N_("The panel leaned false{strength}, against the evidence."),
    "misleading": N_("The panel leaned misleading{strength}, against the evidence."),
}


def lean_line(report: Report, words: Words = ENGLISH) -> str:
    """One short line on which way the panel leaned: for an unproven post ("The panel
    leans false (62%)."; what would settle it is a note, and the summary above it says
    that the evidence settled nothing), and for a verdict the evidence decided against
    the panel's ruling ("The panel leaned true (92%), against the evidence.")."""
    lean = report.lean
    if lean is not None and lean.against_evidence:
        strength = f" ({words.percent(lean.probability)})" if lean.probability is not None else ""
        return words(_AGAINST[lean.outcome], strength=strength)
    if report.verdict != "unproven":
        return ""
    if report.lean is None:
        return words("The panel leans neither way.")
    probability = report.lean.probability
    strength = f" ({words.percent(probability)})" if probability is not None else ""
    return words(_LEANS[report.lean.outcome], strength=strength)


def settle_note(report: Report, words: Words = ENGLISH) -> list[str]:
    """What would settle an unproven post, as a note under the card."""
    if report.verdict != "unproven" or report.lean is None or not report.lean.settle:
        return []
    return [words("What would settle it: {settle}", settle=report.lean.settle)]


def checked_line(report: Report, words: Words = ENGLISH) -> str:
    """What an image post's check read: the caption, the text in its images ("Checked:
    the caption and the text in 1 image"). Both forms start with the words of
    ``"Checked: {read}"`` (a renderer may show what follows them alone)."""
    if not report.images:
        return ""
    images = words.plural("{count} image", "{count} images", len(report.images))
    if any(image.text for image in report.images):
        read = words("the text in {images}", images=images)
    else:
        read = words("{images} (no text found in it)", images=images)
    if report.caption:
        return words("Checked: the caption and {read}", read=read)
    return words("Checked: {read}", read=read)


def read_line(report: Report, words: Words = ENGLISH) -> str:
    """The words heard in a post's voice note, or the first line or two of the text
    read from its image, on one line
    and cut at a word to about :data:`MAX_READ` characters ("Read from the image:
    “Governor signs slaw”"), so that a misreading shows on the card; with several
    images, the first with text, by its number; ``""`` when no image had text.
    The text is the image's (anyone's): each renderer escapes it. A voice note's words
    come first, the same way ("Heard in the voice note: “…”")."""
    if report.heard is not None:
        return words("Heard in the voice note: “{text}”", text=clip(report.heard.text, MAX_READ))
    found = next((image for image in report.images if image.text.strip()), None)
    if found is None:
        return ""
    lines = [line for line in found.text.splitlines() if line.strip()]
    text = clip(" ".join(lines[:2]), MAX_READ)
    if len(report.images) > 1:
        return words("Read from image {index}: “{text}”", index=found.index, text=text)
    return words("Read from the image: “{text}”", text=text)


def image_notes(report: Report, words: Words = ENGLISH) -> list[str]:
    """The words a fact-checker would stamp, printed on an image (they are the post's
    own words, not a rating), and where the image appeared before."""
    notes = []
    for image in report.images:
        for hit in image.labels[:1]:
            if len(report.images) > 1:
                notes.append(
                    words(
                        'Image {index} carries the words "{line}".',
                        index=image.index,
                        line=hit.line,
                    )
                )
            else:
                notes.append(words('The image carries the words "{line}".', line=hit.line))
        same = [s for s in image.sightings if s.relation == "same source"]
        if same:
            first = min(same, key=lambda s: s.published or dt.date.max)
            where = first.title or first.url
            if first.published:
                date = first.published.isoformat()
                notes.append(
                    words(
                        "This image appeared on {date} at {where} ({url}).",
                        date=date,
                        where=where,
                        url=first.url,
                    )
                )
            else:
                notes.append(
                    words("This image appeared at {where} ({url}).", where=where, url=first.url)
                )
    return notes


def cut_note(notes: list[Note], words: Words = ENGLISH) -> list[str]:
    """When the post was cut (the report's typed notes): how long it was, how much was
    checked, how much of it the search for sources and the panel read."""
    said: list[str] = []
    for found in notes:
        numbers = found.numbers
        if found.kind == "post_cut":
            said.insert(
                0,
                words(
                    "it has {whole} characters and only the first {checked} were checked",
                    whole=words.number(numbers["whole"]),
                    checked=words.number(numbers["checked"]),
                ),
            )
        elif found.kind == "search_cut":
            count = words.number(numbers["chars"])
            said.append(
                words("the search for sources read its first {count} characters", count=count)
            )
        elif found.kind == "models_cut":
            count = words.number(numbers["chars"])
            said.append(words("the panel read its first {count} characters", count=count))
    return [words("The post was cut: {parts}.", parts="; ".join(said))] if said else []


def no_web_note(report: Report, words: Words = ENGLISH) -> str:
    """Why no web page is among the evidence: web search is off, it failed, or it found
    nothing (the report's typed notes say which)."""
    kinds = {(n.kind, name) for n in report.notes for name in (n.names or [""])}
    if ("left_out", "web") in kinds:
        return words("No web evidence: web search was left out of this check.")
    if any(kind == "web_off" for kind, _ in kinds):
        return words("No web evidence: web search is off on this bot.")
    if any(kind == "source_failed" and name.startswith("web:") for kind, name in kinds):
        return words("No web evidence: the web search failed.")
    if report.search_mode == "paper":
        return words("No web evidence: the web search, which leaves out news sites, found nothing.")
    return words("No web evidence: the web search found nothing on this post.")


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


def failed_steps(report: Report) -> tuple[int, int]:
    """How many of the panel's steps failed, of how many."""
    steps = panel_steps(report)
    return sum(status == "failed" for _, status, _ in steps), len(steps)


def repeat_note(kind: str | None, original_at: dt.datetime | None, words: Words = ENGLISH) -> str:
    """For an answer from the store: "Repeat of a check from 2024-03-02 10:00 UTC."."""
    if kind is None:
        return ""
    if original_at is None:
        return words("Repeat of a check.") if kind == "exact" else words("Near-repeat of a check.")
    when = f"{original_at.astimezone(dt.UTC):%Y-%m-%d %H:%M}"
    if kind == "exact":
        return words("Repeat of a check from {when} UTC.", when=when)
    return words("Near-repeat of a check from {when} UTC.", when=when)


def sources_line(report: Report, words: Words = ENGLISH) -> str:
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
                return words("What the sources say: “{said}”", said=said)
    return ""


def checks_left_line(left: int | None, words: Words = ENGLISH) -> str:
    """How many checks the asker has left today, when fewer than
    :data:`FEW_CHECKS_LEFT`; ``""`` otherwise (or when not known)."""
    if left is None or left >= FEW_CHECKS_LEFT:
        return ""
    if left == 0:
        return words("You have no checks left today; more come as the last 24 hours' checks age.")
    return words.plural(
        "You have {count} check left today.", "You have {count} checks left today.", left
    )
