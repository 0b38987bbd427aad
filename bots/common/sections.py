"""The Debate, Evidence and Claims sections of a report, as plain text blocks that
each platform renders in its own markup."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from zofia_engine.images.grounds import is_label_lead
from zofia_engine.report import ClaimResult, EvidenceItem, JudgeRuling, Report
from zofia_engine.retrieval.credibility import QUALITY_WORDS

__all__ = [
    "DEBATE_STOPS",
    "PANEL_NOT_ASKED",
    "SECTION_KINDS",
    "SIDE_NAMES",
    "TREE_STOPS",
    "Block",
    "Section",
    "claim_scores",
    "evidence_weight",
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
    "repetition": "Both sides only repeated what had been said.",
    "probabilities": "The judge was sure enough to stop.",
    "judge": "The judge said it had heard enough.",
}

#: why a report has no linguist or expert findings (``Analyses.held`` false)
PANEL_NOT_ASKED = (
    "The linguist and the domain expert were not asked: no claim was settled by the "
    "evidence, so their analyses could not change the verdict."
)


def _debate(report: Report) -> tuple[Block, ...]:
    blocks = []
    for entry in report.debate.timeline():
        if isinstance(entry, JudgeRuling):
            decision = entry.decision or "no ruling"
            forced = " (forced at the round limit)" if entry.forced else ""
            body = entry.reason if entry.status == "ok" else f"(failed: {entry.error})"
            blocks.append(Block(f"Round {entry.round} · Judge: {decision}{forced}", body))
            continue
        body = "\n\n".join(part for part in (entry.rebuttal, entry.argument) if part)
        if entry.status == "ok" and entry.repeated:
            body = "(nothing new: this turn repeated what had been said)"
        elif entry.status != "ok":
            body = f"(this turn failed: {entry.error or entry.status})"
        elif entry.cites:
            body += "\n\nCites: " + ", ".join(entry.cites)
        phase = f", {entry.phase}" if entry.phase else ""
        blocks.append(Block(f"Round {entry.round} · {SIDE_NAMES[entry.side]}{phase}", body))
    ended = DEBATE_STOPS.get(report.debate.stopped_by)
    if ended is None and report.debate.forced and report.debate.held:
        ended = f"The round limit ({report.debate.max_rounds}) was reached."
    if ended and report.debate.held:
        blocks.append(Block("Why the debate ended", ended))
    if not report.analyses.held:
        blocks.append(Block("Why the panel was not asked", PANEL_NOT_ASKED))
    return tuple(blocks)


def _pictures(report: Report) -> list[Block]:
    """Each picture of the post: the text read from it and what was not done."""
    blocks = []
    for image in report.images:
        sure = f", confidence {image.ocr_confidence:.0%}" if image.ocr_confidence else ""
        heading = f"Picture {image.index} ({image.width}×{image.height}{sure})"
        body = f"Text read from it:\n{image.text}" if image.text else "No text was found in it."
        if image.notes:
            body += "\n\n" + "; ".join(image.notes).capitalize() + "."
        blocks.append(Block(heading, body, ""))
    return blocks


def _evidence(report: Report) -> tuple[Block, ...]:
    blocks = _pictures(report)
    for item in report.evidence:
        date = f", {item.published.isoformat()}" if item.published else ""
        heading = f"[{item.id}] {item.title} ({item.provider}{date})"
        weight = evidence_weight(item)
        body = f"{weight}\n{item.text}" if weight else item.text
        if item.stance is not None and item.stance.sentence:
            body += f"\n\nShown by: “{item.stance.sentence}”"
        blocks.append(Block(heading, body, item.url))
    return tuple(blocks)


def evidence_weight(item: EvidenceItem) -> str:
    """What a document weighs, in one line: "refutes · reuters.com · high quality"."""
    parts = []
    if item.source == "factcheck":
        parts.append(f"published fact-check · rated “{item.rating}”")
    if is_label_lead(item):
        parts.append("the picture carries these words · a lead, not a rating")
    elif item.source == "image" and item.rating:
        parts.append(f"a finding on the post's picture · points to “{item.rating}”")
    if item.stance is not None and item.stance.status == "ok":
        parts.append(item.stance.label)
    if item.credibility is not None:
        domain = f"{item.credibility.domain} · " if item.credibility.domain else ""
        parts.append(domain + QUALITY_WORDS[item.credibility.label])
    if item.query == "counter":
        parts.append("found by the counter-evidence search")
    if item.reversed:
        parts.append("its support counts against the post")
    return " · ".join(parts)


def _claims(report: Report) -> tuple[Block, ...]:
    """Each claim; in a tree of claims, indented by depth, with its veracity v and
    reliability r (its own, and from its parts when it was split)."""
    blocks = []
    if report.tree is not None and report.tree.veracity is not None:
        t = report.tree
        decision = t.decision or "no decision"
        blocks.append(
            Block(
                f"Tree of claims · {decision}",
                f"v {t.veracity:.2f} · r {t.reliability or 0:.2f} after {t.evaluations} "
                f"judgements ({TREE_STOPS.get(t.stopped_by, t.stopped_by)}).",
            )
        )
    for claim in report.claims:
        kind = "Core claim" if claim.kind == "core" else "Sub-claim"
        label = claim.label or claim.status
        indent = "  " * claim.depth + ("└ " if claim.depth else "")
        dimension = f" ({claim.dimension})" if claim.dimension else ""
        parts = [claim.text]
        scores = claim_scores(claim)
        if scores:
            parts.append(scores)
        if claim.reason or claim.error:
            parts.append(claim.reason or claim.error)
        parts.extend(f"“{quote.text}” ({quote.evidence_id})" for quote in claim.quotes)
        blocks.append(Block(f"{indent}{kind}{dimension} · {label}", "\n\n".join(parts)))
    return tuple(blocks)


#: why the tree of claims stopped, in words
TREE_STOPS = {
    "decisive": "the core claim was settled",
    "converged": "it stopped changing",
    "budget": "the budget of judgements was spent",
    "exhausted": "nothing was left to split",
}


def claim_scores(claim: ClaimResult) -> str:
    """A claim's veracity v and reliability r: its own, and from its parts when split."""
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
