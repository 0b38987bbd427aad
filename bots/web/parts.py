"""The parts of a report page: the evidence, the claims, the debate's rounds, the
images and the analyses, as plain records the template lays out.

Evidence ids are what the claims and the debaters cite; each document gets an anchor
of its own (``e1``, ``e2``, …) so a citation links to it whatever the id says.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from bots.render.card import VERDICTS
from bots.render.sections import SIDE_NAMES, claim_scores, evidence_weight
from zofia_engine.report import ClaimResult, Report

from .safety import href, redact

__all__ = [
    "MAX_DOCUMENT",
    "MAX_TEXT",
    "CiteView",
    "ClaimView",
    "EvidenceView",
    "FindingView",
    "ImageView",
    "LinkView",
    "RoundView",
    "RulingView",
    "TurnView",
    "claim_views",
    "cut",
    "evidence_views",
    "failure",
    "images",
    "linguist_views",
    "rounds",
]

#: characters of a document's text shown (its page has the rest)
MAX_DOCUMENT = 1500
#: characters of any one thing a model wrote (a runaway reply must not fill the page)
MAX_TEXT = 8000


#: what a failed step says on a public page: why it failed is the operator's to read
STEP_FAILED = "This step failed; the details are in the operator's log."


def failure(status: str) -> str:
    """What a failed step says on the page (:data:`STEP_FAILED`, never the error's own
    words); ``""`` for a step that ran."""
    return STEP_FAILED if status == "failed" else ""


def cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


@dataclass(frozen=True)
class LinkView:
    """A text and where it leads; ``href`` is ``""`` when the address may not be linked."""

    text: str
    href: str


@dataclass(frozen=True)
class CiteView:
    """A cited evidence id, and the anchor of its document (``""``: not a document)."""

    id: str
    anchor: str


@dataclass(frozen=True)
class EvidenceView:
    anchor: str
    id: str
    source: str
    title: str
    link: LinkView
    provider: str
    published: str
    weight: str
    stance: str
    quality: float | None
    quality_label: str
    quality_class: str  # the source's class (Credibility.label): what the chart keys on
    text: str
    shown_by: str
    rating: str
    publisher: str


@dataclass(frozen=True)
class ClaimView:
    id: str
    depth: int
    kind: str
    dimension: str
    label: str
    importance: str
    text: str
    scores: str
    reason: str
    quotes: tuple[tuple[str, CiteView], ...]
    context: tuple[CiteView, ...]
    failed: str


@dataclass(frozen=True)
class TurnView:
    side: str
    side_name: str
    phase: str
    rebuttal: str
    argument: str
    cites: tuple[CiteView, ...]
    failed: str


@dataclass(frozen=True)
class RulingView:
    decision: str
    verdict: str
    reason: str
    forced: bool
    odds: str
    failed: str


@dataclass(frozen=True)
class RoundView:
    number: int
    turns: tuple[TurnView, ...]
    rulings: tuple[RulingView, ...]


@dataclass(frozen=True)
class ImageView:
    title: str
    text: str
    lines: tuple[str, ...]
    sightings: tuple[LinkView, ...]


@dataclass(frozen=True)
class FindingView:
    """An analysis: a title, which way it leaned, and its parts as (heading, text)."""

    title: str
    lean: str
    parts: tuple[tuple[str, str], ...]
    failed: str


def evidence_views(report: Report) -> tuple[EvidenceView, ...]:
    views = []
    for n, item in enumerate(report.evidence, 1):
        stance = item.stance.label if item.stance and item.stance.status == "ok" else ""
        credibility = item.credibility
        views.append(
            EvidenceView(
                anchor=f"e{n}",
                id=item.id,
                source=item.source,
                title=item.title or item.url or item.id,
                link=LinkView(item.url, href(item.url)),
                provider=item.provider,
                published=item.published.isoformat() if item.published else "",
                weight=evidence_weight(item),
                stance=stance,
                quality=credibility.quality if credibility else None,
                quality_label=credibility.words if credibility else "",
                quality_class=credibility.label if credibility else "unknown",
                text=cut(item.text, MAX_DOCUMENT),
                shown_by=item.stance.sentence if item.stance else "",
                rating=item.rating,
                publisher=item.publisher or item.provider,
            )
        )
    return tuple(views)


def _cite(evidence_id: str, anchors: dict[str, str]) -> CiteView:
    return CiteView(evidence_id, anchors.get(evidence_id, ""))


def _tree_order(claims: list[ClaimResult]) -> list[tuple[int, ClaimResult]]:
    """The claims root first, each followed by its children (depth-first, in report
    order), with their depth in the tree; a claim whose parent is missing is a root."""
    ids = {claim.id for claim in claims}
    children: dict[str | None, list[ClaimResult]] = defaultdict(list)
    for claim in claims:
        children[claim.parent if claim.parent in ids else None].append(claim)
    ordered: list[tuple[int, ClaimResult]] = []
    seen: set[str] = set()
    stack = [(0, claim) for claim in reversed(children[None])]
    while stack:
        depth, claim = stack.pop()
        if claim.id in seen:  # two claims with one id: show each once
            continue
        seen.add(claim.id)
        ordered.append((depth, claim))
        stack.extend((depth + 1, child) for child in reversed(children[claim.id]))
    # Claims in a cycle reach no root: shown last, at the top level.
    ordered += [(0, claim) for claim in claims if claim.id not in seen]
    return ordered


def claim_views(report: Report, anchors: dict[str, str]) -> tuple[ClaimView, ...]:
    """The claims in tree order (a flat list when there is no tree)."""
    views = []
    for depth, claim in _tree_order(report.claims):
        importance = f"weight {claim.importance:.2f}" if claim.importance is not None else ""
        views.append(
            ClaimView(
                id=claim.id,
                depth=min(depth, 8),
                kind="Core claim" if claim.kind == "core" else "Sub-claim",
                dimension=claim.dimension,
                label=claim.label or claim.status,
                importance=importance,
                text=cut(claim.text),
                scores=claim_scores(claim),
                reason=cut(claim.reason),
                quotes=tuple((cut(q.text), _cite(q.evidence_id, anchors)) for q in claim.quotes),
                context=tuple(_cite(evidence_id, anchors) for evidence_id in claim.context),
                failed=failure(claim.status),
            )
        )
    return tuple(views)


def _odds(probabilities: dict[str, float] | None) -> str:
    if not probabilities:
        return ""
    ranked = sorted(probabilities.items(), key=lambda kv: -kv[1])
    return " · ".join(f"{name} {p:.0%}" for name, p in ranked)


def rounds(report: Report, anchors: dict[str, str]) -> tuple[RoundView, ...]:
    """The debate as rounds: each side's turns in the order they spoke, then the ruling."""
    turns: dict[int, list[TurnView]] = defaultdict(list)
    rulings: dict[int, list[RulingView]] = defaultdict(list)
    for turn in report.debate.turns:
        turns[turn.round].append(
            TurnView(
                side=turn.side,
                side_name=SIDE_NAMES[turn.side],
                phase=turn.phase or "",
                rebuttal=cut(turn.rebuttal),
                argument=cut(turn.argument),
                cites=tuple(_cite(cited, anchors) for cited in turn.cites),
                failed=failure(turn.status),
            )
        )
    for ruling in report.debate.rulings:
        decided = ruling.decision or ruling.outcome
        verdict = decided if decided in VERDICTS else ""
        words = VERDICTS[verdict][1] if verdict else (decided or "no ruling")
        rulings[ruling.round].append(
            RulingView(
                decision="Continue" if decided == "continue" else words,
                verdict=verdict,
                reason=cut(ruling.reason),
                forced=ruling.forced,
                odds=_odds(ruling.probabilities),
                failed=failure(ruling.status),
            )
        )
    return tuple(
        RoundView(number, tuple(turns[number]), tuple(rulings[number]))
        for number in sorted(set(turns) | set(rulings))
    )


def images(report: Report) -> tuple[ImageView, ...]:
    """Each image of the post: the text read from it, labels, the vision model's
    reading, where it was seen before, and what was not done."""
    views = []
    for image in report.images:
        sure = (
            f", text read with {image.ocr_confidence:.0%} confidence"
            if image.ocr_confidence
            else ""
        )
        lines = [
            f'The image carries the words "{hit.line}": a lead to check, not a rating.'
            for hit in image.labels
        ]
        vision = image.vision
        if vision is not None:
            lines += [
                f"Seen by the vision model: {vision.description}",
                f"Miscaption {vision.miscaption_rate}/100 ({vision.band}): "
                f"{vision.miscaption_reason}",
                f"Tampering {vision.tampering}/100: {vision.tampering_reason}",
            ]
        lines += [redact(note) for note in image.notes]
        sightings = tuple(
            LinkView(
                f"{s.relation}: {s.title or s.url}"
                + (f" ({s.published.isoformat()})" if s.published else ""),
                href(s.url),
            )
            for s in image.sightings
        )
        views.append(
            ImageView(
                title=f"Image {image.index} ({image.width}×{image.height}{sure})",
                text=cut(image.text),
                lines=tuple(lines),
                sightings=sightings,
            )
        )
    return tuple(views)


def linguist_views(report: Report) -> tuple[FindingView, ...]:
    return tuple(
        FindingView(
            title=finding.dimension.replace("_", " ").capitalize(),
            lean=finding.lean or "",
            parts=(("", cut(finding.analysis)),) if finding.analysis else (),
            failed=failure(finding.status),
        )
        for finding in report.analyses.linguist
    )
