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
from zofia_engine.report import ClaimResult, DebateTurn, EvidenceItem, JudgeRuling, Report
from zofia_engine.retrieval.credibility import counts_against

from .sentences import (
    CITED_WORDS,
    cite_line,
    counted,
    listed,
    named_sources,
    passage_once,
    source_name,
    source_site,
)

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
    "pro": "For (true)",
    "con": "Against (false or misleading)",
    "politician": "Politician",
    "scientist": "Scientist",
}


#: why a debate ended, in words
DEBATE_STOPS = {
    "no_evidence": "One round only: no claim was settled by the evidence, so more rounds "
    "could not change the verdict.",
    "settled": "One round only: the evidence settled the core claim, so more rounds could "
    "not change the verdict.",
    "repetition": "Both sides only repeated what had been said.",
    "probabilities": "The judge was sure enough to stop.",
    "judge": "The judge said it had heard enough.",
}

#: why a report has no linguist or expert findings (``Analyses.held`` false), by what
#: the evidence settled (``Debate.stopped_by``)
_PANEL_NOT_ASKED = {
    "settled": "The linguist and the domain expert were not asked: the evidence settled "
    "the core claim, so their analyses could not change the verdict.",
    "": "The linguist and the domain expert were not asked: no claim was settled by the "
    "evidence, so their analyses could not change the verdict.",
}


def panel_not_asked(report: Report) -> str:
    """Why the report has no linguist or expert findings; ``""`` when it has them."""
    if report.analyses.held:
        return ""
    return _PANEL_NOT_ASKED.get(report.debate.stopped_by, _PANEL_NOT_ASKED[""])


def _debate(report: Report) -> tuple[Block, ...]:
    blocks = []
    for entry in report.debate.timeline():
        if isinstance(entry, JudgeRuling):
            blocks.append(_ruling(entry, report))
            continue
        body = "\n\n".join(
            named_sources(part, report.evidence)
            for part in (entry.rebuttal, entry.argument)
            if part
        )
        if entry.status == "ok" and entry.repeated:
            body = "(nothing new: this turn repeated what had been said)"
        elif entry.status != "ok":
            body = f"(this turn {'failed' if entry.status == 'failed' else 'was skipped'})"
        elif entry.cites:
            body += _citations(entry, report)
        phase = f", {entry.phase}" if entry.phase else ""
        blocks.append(Block(f"Round {entry.round} · {SIDE_NAMES[entry.side]}{phase}", body))
    ended = DEBATE_STOPS.get(report.debate.stopped_by)
    if ended is None and report.debate.forced and report.debate.held:
        ended = f"The round limit ({report.debate.max_rounds}) was reached."
    if ended and report.debate.held:
        blocks.append(Block("Why the debate ended", ended))
    if not report.analyses.held:
        blocks.append(Block("Why the panel was not asked", panel_not_asked(report)))
    return tuple(blocks)


#: the judge's decision, in words
_DECISIONS = {"continue": "another round", None: "no ruling"}


def _ruling(entry: JudgeRuling, report: Report) -> Block:
    decision = _DECISIONS.get(entry.decision, entry.decision)
    forced = " (forced at the round limit)" if entry.forced else ""
    body = (
        named_sources(entry.reason, report.evidence)
        if entry.status == "ok"
        else "(the judge's step failed)"
    )
    return Block(f"Round {entry.round} · Judge: {decision}{forced}", body)


def _citations(turn: DebateTurn, report: Report) -> str:
    """What a turn cites, by who said it ("the post", "the domain expert") and each
    source by its title, site and link."""
    by_id = {item.id: item for item in report.evidence}
    who = [CITED_WORDS[c] for c in turn.cites if c in CITED_WORDS]
    sources = [by_id[c] for c in turn.cites if c in by_id]
    if sources:
        who.append("this source" if len(sources) == 1 else "these sources")
    if not who:
        return ""
    if not sources:
        return f"\n\nCites {listed(who)}."
    return f"\n\nCites {listed(who)}:" + "".join(f"\n• {cite_line(item)}" for item in sources)


def _images(report: Report) -> list[Block]:
    """Each image of the post: the text read from it and what was not done."""
    blocks = []
    for image in report.images:
        heading = f"Image {image.index} ({image.width}×{image.height})"
        body = f"Text read from it:\n{image.text}" if image.text else "No text was found in it."
        if image.notes:
            body += "\n\n" + "; ".join(image.notes).capitalize() + "."
        blocks.append(Block(heading, body, ""))
    return blocks


def _evidence(report: Report) -> tuple[Block, ...]:
    blocks = _images(report)
    for item in report.evidence:
        heading = " ".join(item.title.split()) or source_name(item)
        passage = passage_once(item.text)
        body = "\n".join(part for part in (_about(item), passage) if part)
        sentence = item.stance.sentence if item.stance is not None else ""
        if sentence and len(passage) > LONG_PASSAGE:  # a short passage shows it at a glance
            body += f"\n\nThe sentence that shows it: “{sentence}”"
        blocks.append(Block(heading, body, item.url))
    return tuple(blocks)


#: a passage longer than this points to the sentence that shows its stance
LONG_PASSAGE = 600
#: a document's stance on the post's core claim, in words
STANCE_WORDS = {
    "supports": "supports the post's core claim",
    "refutes": "contradicts the post's core claim",
    "neutral": "takes no side on the post's core claim",
}


def _about(item: EvidenceItem) -> str:
    """A document in one line, for a reader: its source, its date, its stance in words,
    its quality; the domain only when there is one ("reuters.com · 2026-11-03 ·
    contradicts the post's core claim · high quality")."""
    parts = []
    if item.source == "factcheck":
        parts.append(f"published fact-check by {source_name(item)} · rated “{item.rating}”")
    elif item.source == "image":
        parts.append(_image_finding(item))
    else:
        parts.append(source_site(item))
    if item.published is not None:
        parts.append(item.published.isoformat())
    if item.stance is not None and item.stance.status == "ok":
        parts.append(STANCE_WORDS[item.stance.label])
    if item.credibility is not None and item.source != "factcheck":
        parts.append(item.credibility.words)
    if item.query == "counter":
        parts.append("found by the search for rebuttals")
    if item.query == "planned":
        parts.append("found by a second search")
    if item.reversed:
        parts.append("its support counts against the post")
    return " · ".join(part for part in parts if part)


def _image_finding(item: EvidenceItem) -> str:
    if item.label_lead:
        return "the image carries these words · a lead, not a rating"
    if item.rating:
        return f"a finding on the post's image · points to “{item.rating}”"
    return "a finding on the post's image"


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


def _claims(report: Report) -> tuple[Block, ...]:
    """Each claim with its status in words; in a tree of claims, indented by depth, and
    the tree's outcome when it agrees with the verdict."""
    blocks = _tree(report)
    by_id = {item.id: item for item in report.evidence}
    for claim in report.claims:
        kind = "Core claim" if claim.kind == "core" else "Sub-claim"
        indent = "  " * claim.depth + ("└ " if claim.depth else "")
        dimension = f" ({claim.dimension})" if claim.dimension else ""
        parts = [claim.text]
        if claim.reason:
            parts.append(named_sources(claim.reason, report.evidence))
        if claim.status == "failed":
            parts.append("Its reading failed; the verdict used the rest.")
        for quote in claim.quotes:
            item = by_id.get(quote.evidence_id)
            parts.append(f"“{quote.text}”" + (f"\n— {cite_line(item)}" if item else ""))
        status = claim_status(claim, report.evidence)
        blocks.append(Block(f"{indent}{kind}{dimension} · {status}", "\n\n".join(parts)))
    return tuple(blocks)


def _tree(report: Report) -> list[Block]:
    """The tree of claims' outcome, in words; shown only when it agrees with the verdict
    (a tree that reads "true" beside an unproven card would contradict it)."""
    t = report.tree
    if t is None or t.veracity is None:
        return []
    agrees = t.decision == report.verdict or (t.decision is None and report.verdict == "unproven")
    if not agrees:
        return []
    outcome = f"read {t.decision}" if t.decision else "settle nothing"
    why = TREE_STOPS.get(t.stopped_by, "")
    body = (
        f"Taken together, the claim and its parts {outcome}, after "
        f"{counted(t.evaluations, 'judgement')}" + (f" ({why})." if why else ".")
    )
    return [Block(f"Tree of claims · {t.decision or 'not settled'}", body)]


def claim_status(claim: ClaimResult, evidence: list[EvidenceItem]) -> str:
    """A claim's status in words: "supported by reuters.com", "contradicted by
    Wikipedia (Springfield)", "not settled" …"""
    if claim.status == "failed":
        return "could not be read"
    if claim.status == "skipped" or claim.label is None:
        return "not read"
    by_id = {item.id: item for item in evidence}
    sources = [by_id[q.evidence_id] for q in claim.quotes if q.evidence_id in by_id]
    names = listed(list(dict.fromkeys(source_name(item) for item in sources))) or "a source"
    if claim.label == "refutes" and claim.quotes:
        return f"contradicted by {names}"
    if claim.label == "supports" and claim.quotes:
        counting = [
            item
            for item in sources
            if item.credibility is None or not counts_against("supports", item.credibility)
        ]
        if sources and not counting:
            return f"supported only by {names}, whose support does not count"
        return f"supported by {names}"
    return "not settled"


#: why the tree of claims stopped, in words
TREE_STOPS = {
    "decisive": "the core claim was settled",
    "converged": "it stopped changing",
    "budget": "the budget of judgements was spent",
    "exhausted": "nothing was left to split",
}


def claim_scores(claim: ClaimResult) -> str:
    """A claim's veracity v and reliability r: its own, and from its parts when split
    (for the report page; the chat's Claims thread says the claim's status in words)."""
    if claim.veracity is None or claim.reliability is None:
        return ""
    own = f"v {claim.veracity:.2f} · r {claim.reliability:.2f}"
    tv, tr = claim.tree_veracity, claim.tree_reliability
    if tv is not None and tr is not None and (tv, tr) != (claim.veracity, claim.reliability):
        own += f"; from its parts v {tv:.2f} · r {tr:.2f}"
    return own


_EMPTY = {
    "debate": "The debate did not run for this check.",
    "evidence": "No evidence was retrieved for this post.",
    "claims": "No claims were extracted from this post.",
}
_TITLES = {"debate": "Debate", "evidence": "Evidence", "claims": "Claims"}
#: what an empty section says of a check first asked in another chat (storage.other_chats)
_ELSEWHERE = (
    "This post was first checked in another chat: {what} stay there. Here, a check shows "
    "its verdict, its summary and its sources."
)
_WHAT = {"debate": "its debate and analyses", "evidence": "its findings", "claims": "its claims"}
_ALREADY = {"debate": "The debate is", "evidence": "The evidence is", "claims": "The claims are"}
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
    blocks = _BUILDERS[kind](report)
    if not blocks and seen_elsewhere(report):
        blocks = (Block("Not shown here", _ELSEWHERE.format(what=_WHAT[kind])),)
    return Section(kind, _TITLES[kind], blocks or (Block("Nothing here", _EMPTY[kind]),))


def already_shown(kind: str) -> str:
    """What a second tap on a section's button is told: "The claims are already in this
    thread."."""
    return f"{_ALREADY.get(kind, f'The {kind} is')} already in this thread."
