"""The Debate, Evidence and Claims sections of a report, as plain text blocks that
each platform renders in its own markup.

They are written for a chat reader: a source is named by its title and site and given
with its link, a citation of the panel by who said it ("the domain expert"), a claim's
status in words ("contradicted by reuters.com"); evidence ids, role ids and scores stay
in the report page and the JSON (:func:`claim_scores` and :func:`evidence_weight` are
theirs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bots.service.records import seen_elsewhere
from zofia_engine.report import DebateTurn, EvidenceItem, JudgeRuling, Report

from .claim_blocks import TREE_STOPS, claim_blocks, claim_scores, claim_status
from .sentences import (
    CITED_WORDS,
    cite_line,
    listed,
    named_sources,
    passage_once,
    source_name,
    source_site,
)
from .words import ENGLISH, N_, Words

__all__ = [
    "DEBATE_STOPS",
    "SECTION_KINDS",
    "SIDE_NAMES",
    "STANCE_WORDS",
    "TREE_STOPS",
    "Block",
    "Section",
    "already_shown",
    "claim_scores",
    "claim_status",
    "evidence_weight",
    "panel_not_asked",
    "section",
]

SECTION_KINDS = ("debate", "evidence", "claims")


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


#: a debater's side, in words
SIDE_NAMES = {
    "pro": N_("For (true)"),
    "con": N_("Against (false or misleading)"),
    "politician": N_("Politician"),
    "scientist": N_("Scientist"),
}


#: why a debate ended, in words
DEBATE_STOPS = {
    "no_evidence": N_(
        "One round only: no claim was settled by the evidence, so more rounds "
        "could not change the verdict."
    ),
    "settled": N_(
        "One round only: the evidence settled the core claim, so more rounds could "
        "not change the verdict."
    ),
    "repetition": N_("Both sides only repeated what had been said."),
    "probabilities": N_("The judge was sure enough to stop."),
    "judge": N_("The judge said it had heard enough."),
}

#: why a report has no linguist or expert findings (``Analyses.held`` false), by what
#: the evidence settled (``Debate.stopped_by``)
_PANEL_NOT_ASKED = {
    "settled": N_(
        "The linguist and the domain expert were not asked: the evidence settled "
        "the core claim, so their analyses could not change the verdict."
    ),
    "": N_(
        "The linguist and the domain expert were not asked: no claim was settled by the "
        "evidence, so their analyses could not change the verdict."
    ),
}


def panel_not_asked(report: Report, words: Words = ENGLISH) -> str:
    """Why the report has no linguist or expert findings; ``""`` when it has them."""
    if report.analyses.held:
        return ""
    return words(_PANEL_NOT_ASKED.get(report.debate.stopped_by, _PANEL_NOT_ASKED[""]))


#: what a turn that said nothing new, failed or was skipped shows instead
_TURN_GAPS = {
    "repeated": N_("(nothing new: this turn repeated what had been said)"),
    "failed": N_("(this turn failed)"),
    "skipped": N_("(this turn was skipped)"),
}


def _debate(report: Report, words: Words) -> tuple[Block, ...]:
    blocks = []
    for entry in report.debate.timeline():
        if isinstance(entry, JudgeRuling):
            blocks.append(_ruling(entry, report, words))
            continue
        body = "\n\n".join(
            named_sources(part, report.evidence, words)
            for part in (entry.rebuttal, entry.argument)
            if part
        )
        gap = "repeated" if entry.status == "ok" and entry.repeated else entry.status
        if gap != "ok":
            body = words(_TURN_GAPS[gap])
        elif entry.cites:
            body += _citations(entry, report, words)
        side = words(SIDE_NAMES[entry.side])
        heading = words("Round {round} · {side}", round=entry.round, side=side)
        blocks.append(Block(heading + (f", {entry.phase}" if entry.phase else ""), body))
    ended = (
        words(DEBATE_STOPS[report.debate.stopped_by])
        if report.debate.stopped_by in DEBATE_STOPS
        else ""
    )
    if not ended and report.debate.forced and report.debate.held:
        ended = words("The round limit ({count}) was reached.", count=report.debate.max_rounds)
    if ended and report.debate.held:
        blocks.append(Block(words("Why the debate ended"), ended))
    if not report.analyses.held:
        blocks.append(Block(words("Why the panel was not asked"), panel_not_asked(report, words)))
    return tuple(blocks)


#: the judge's decision, in words
_DECISIONS = {"continue": N_("another round"), None: N_("no ruling")}


def _ruling(entry: JudgeRuling, report: Report, words: Words) -> Block:
    said = _DECISIONS.get(entry.decision)
    decision = words(said) if said is not None else str(entry.decision)
    heading = words("Round {round} · Judge: {decision}", round=entry.round, decision=decision)
    if entry.forced:
        heading += " " + words("(forced at the round limit)")
    if entry.status != "ok":
        return Block(heading, words("(the judge's step failed)"))
    return Block(heading, named_sources(entry.reason, report.evidence, words))


def _citations(turn: DebateTurn, report: Report, words: Words) -> str:
    """What a turn cites, by who said it ("the post", "the domain expert") and each
    source by its title, site and link."""
    by_id = {item.id: item for item in report.evidence}
    who = [words(CITED_WORDS[c]) for c in turn.cites if c in CITED_WORDS]
    sources = [by_id[c] for c in turn.cites if c in by_id]
    if sources:
        who.append(words(N_("this source") if len(sources) == 1 else N_("these sources")))
    if not who:
        return ""
    cited = listed(who, words("and"))
    if not sources:
        return "\n\n" + words("Cites {who}.", who=cited)
    lines = "".join(f"\n• {cite_line(item, words)}" for item in sources)
    return "\n\n" + words("Cites {who}:", who=cited) + lines


def _images(report: Report, words: Words) -> list[Block]:
    """Each image of the post: the text read from it and what was not done."""
    blocks = []
    for image in report.images:
        size = {"index": image.index, "width": image.width, "height": image.height}
        heading = words("Image {index} ({width}×{height})", **size)
        read = words("Text read from it:")
        body = f"{read}\n{image.text}" if image.text else words("No text was found in it.")
        if image.notes:
            body += "\n\n" + "; ".join(image.notes).capitalize() + "."
        blocks.append(Block(heading, body, ""))
    return blocks


def _evidence(report: Report, words: Words) -> tuple[Block, ...]:
    blocks = _images(report, words)
    for item in report.evidence:
        heading = " ".join(item.title.split()) or source_name(item, words)
        passage = passage_once(item.text)
        body = "\n".join(part for part in (_about(item, words), passage) if part)
        sentence = item.stance.sentence if item.stance is not None else ""
        if sentence and len(passage) > LONG_PASSAGE:  # a short passage shows it at a glance
            body += "\n\n" + words("The sentence that shows it: “{sentence}”", sentence=sentence)
        blocks.append(Block(heading, body, item.url))
    return tuple(blocks)


#: a passage longer than this points to the sentence that shows its stance
LONG_PASSAGE = 600
#: a document's stance on the post's core claim, in words
STANCE_WORDS = {
    "supports": N_("supports the post's core claim"),
    "refutes": N_("contradicts the post's core claim"),
    "neutral": N_("takes no side on the post's core claim"),
}
#: how a document was found, when not by the first search
_FOUND_BY = {
    "counter": N_("found by the search for rebuttals"),
    "planned": N_("found by a second search"),
}


def _about(item: EvidenceItem, words: Words) -> str:
    """A document in one line, for a reader: its source, its date, its stance in words,
    its quality; the domain only when there is one ("reuters.com · 2026-11-03 ·
    contradicts the post's core claim · high quality")."""
    parts = []
    if item.source == "factcheck":
        by = source_name(item, words)
        parts.append(
            words("published fact-check by {by} · rated “{rating}”", by=by, rating=item.rating)
        )
    elif item.source == "image":
        parts.append(_image_finding(item, words))
    else:
        parts.append(source_site(item, words))
    if item.published is not None:
        parts.append(item.published.isoformat())
    if item.stance is not None and item.stance.status == "ok":
        parts.append(words(STANCE_WORDS[item.stance.label]))
    if item.credibility is not None and item.source != "factcheck":
        parts.append(item.credibility.words)
    if item.query in _FOUND_BY:
        parts.append(words(_FOUND_BY[item.query]))
    if item.reversed:
        parts.append(words("its support counts against the post"))
    return " · ".join(part for part in parts if part)


def _image_finding(item: EvidenceItem, words: Words = ENGLISH) -> str:
    if item.label_lead:
        return words("the image carries these words · a lead, not a rating")
    if item.rating:
        return words("a finding on the post's image · points to “{rating}”", rating=item.rating)
    return words("a finding on the post's image")


def evidence_weight(item: EvidenceItem) -> str:
    """What a document weighs, in one line, for the report page (which keeps the
    panel's own words): "refutes · reuters.com · high quality"."""
    parts = []
    if item.source == "factcheck":
        parts.append(f"published fact-check · rated “{item.rating}”")
    if item.source == "image" and item.rating:
        parts.append(_image_finding(item))
    if item.stance is not None and item.stance.status == "ok":
        parts.append(item.stance.label)
    if item.credibility is not None:
        domain = f"{item.credibility.domain} · " if item.credibility.domain else ""
        parts.append(domain + item.credibility.words)
    if item.query == "counter":
        parts.append("found by the counter-evidence search")
    if item.query == "planned":
        parts.append("found by a second search, planned for the claim")
    if item.reversed:
        parts.append("its support counts against the post")
    return " · ".join(parts)


def _claims(report: Report, words: Words) -> tuple[Block, ...]:
    return tuple(Block(heading, body) for heading, body in claim_blocks(report, words))


_EMPTY = {
    "debate": N_("The debate did not run for this check."),
    "evidence": N_("No evidence was retrieved for this post."),
    "claims": N_("No claims were extracted from this post."),
}
#: a section's title (the words of its button)
_TITLES = {"debate": N_("Debate"), "evidence": N_("Evidence"), "claims": N_("Claims")}
#: what an empty section says of a check first asked in another chat (storage.other_chats)
_ELSEWHERE = {
    "debate": N_(
        "This post was first checked in another chat: its debate and analyses stay there. "
        "Here, a check shows its verdict, its summary and its sources."
    ),
    "evidence": N_(
        "This post was first checked in another chat: its findings stay there. Here, a "
        "check shows its verdict, its summary and its sources."
    ),
    "claims": N_(
        "This post was first checked in another chat: its claims stay there. Here, a check "
        "shows its verdict, its summary and its sources."
    ),
}
_ALREADY = {
    "debate": N_("The debate is already in this thread."),
    "evidence": N_("The evidence is already in this thread."),
    "claims": N_("The claims are already in this thread."),
}
_BUILDERS: dict[str, Callable[[Report, Words], tuple[Block, ...]]] = {
    "debate": _debate,
    "evidence": _evidence,
    "claims": _claims,
}


def section(kind: str, report: Report, words: Words = ENGLISH) -> Section:
    """The Debate, Evidence or Claims section of a report, its fixed words in ``words``
    (the report's own text as it was written).

    Raises:
        ValueError: ``kind`` is not one of :data:`SECTION_KINDS`.
    """
    if kind not in _BUILDERS:
        raise ValueError(f"unknown section {kind!r}; choose one of {', '.join(SECTION_KINDS)}")
    blocks = _BUILDERS[kind](report, words)
    if not blocks and seen_elsewhere(report):
        blocks = (Block(words("Not shown here"), words(_ELSEWHERE[kind])),)
    empty = Block(words("Nothing here"), words(_EMPTY[kind]))
    return Section(kind, words(_TITLES[kind]), blocks or (empty,))


def already_shown(kind: str, words: Words = ENGLISH) -> str:
    """What a second tap on a section's button is told: "The claims are already in this
    thread."."""
    return words(_ALREADY[kind])
