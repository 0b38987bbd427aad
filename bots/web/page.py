"""What a report page shows, built from a stored check and its report: plain typed
records, no markup. The card's wording (``bots.render.card``) and the sections'
(``bots.render.sections``) are reused, so a page says what a chat says.

Nothing here names who asked or where: no requester hash, no chat, no forward origin
(it holds user names). Addresses a backend wrote into an error are replaced by
``[address]``. Strings stay as written; the template escapes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from bots.render.card import VERDICTS, report_card
from bots.render.card_notes import panel_steps
from bots.render.claim_review import claim_review, json_ld
from bots.render.languages import language_tag
from bots.render.sections import TREE_STOPS, panel_not_asked
from bots.service.records import CheckRow
from zofia_engine.report import Report

from .parts import (
    STEP_FAILED,
    ClaimView,
    EvidenceView,
    FindingView,
    ImageView,
    LinkView,
    RoundView,
    claim_views,
    cut,
    evidence_views,
    failure,
    images,
    linguist_views,
    rounds,
)
from .safety import href, redact

__all__ = ["MAX_POST", "ReportPage", "UsageRow", "report_page"]

#: characters of the post shown; the rest is said as a count
MAX_POST = 6000


@dataclass(frozen=True)
class UsageRow:
    """One row of the cost table: a role (or the total), its calls, tokens and time."""

    role: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float


@dataclass(frozen=True)
class ReportPage:
    """Everything one report page shows, in page order."""

    check_id: str
    lang: str
    checked_on: str
    verdict: str
    icon: str
    headline: str
    colour: str
    confidence: str
    confidence_value: float | None
    confidence_basis: str
    summary: str
    lean: str
    notes: tuple[str, ...]
    repeat_note: str
    post_text: str
    post_cut: int
    post_link: LinkView | None
    checked: str
    images: tuple[ImageView, ...]
    factchecks: tuple[EvidenceView, ...]
    tree_line: str
    claims: tuple[ClaimView, ...]
    debate_note: str
    rounds: tuple[RoundView, ...]
    evidence: tuple[EvidenceView, ...]
    linguist: tuple[FindingView, ...]
    expert: FindingView | None
    panel_note: str
    triage: FindingView | None
    failures: tuple[str, ...]
    usage: tuple[UsageRow, ...]
    cached_tokens: int
    timings: tuple[tuple[str, float], ...]
    claim_review: str = ""  # ClaimReview JSON-LD (escaped for a script element), or ""


def report_page(row: CheckRow, report: Report, *, publisher: str = "", url: str = "") -> ReportPage:
    """The page of check ``row`` showing ``report`` (for a repeat, its original's), at
    ``url``; with ClaimReview JSON-LD (:func:`published_review`) by ``publisher``."""
    card = report_card(row.id, report)
    value = report.confidence.value
    text = row.post_text or ""
    link = href(row.url)
    evidence = evidence_views(report)
    anchors = {item.id: item.anchor for item in evidence}
    return ReportPage(
        check_id=row.id,
        lang=language_tag(row.language),
        checked_on=row.created_at.date().isoformat(),
        verdict=report.verdict,
        icon=card.icon,
        headline=card.headline,
        colour=f"#{VERDICTS[report.verdict][2]:06x}",
        confidence=card.confidence,
        confidence_value=value,
        confidence_basis=report.confidence.basis,
        summary=cut(report.summary),
        lean=card.lean,
        notes=card.notes,
        repeat_note=_repeat_note(row),
        post_text=text[:MAX_POST],
        post_cut=max(0, len(text) - MAX_POST),
        post_link=LinkView(row.url, link) if row.url else None,
        checked=card.checked,
        images=images(report),
        factchecks=tuple(item for item in evidence if item.source == "factcheck"),
        tree_line=_tree_line(report),
        claims=claim_views(report, anchors),
        debate_note=_debate_note(report),
        rounds=rounds(report, anchors),
        evidence=tuple(item for item in evidence if item.source != "factcheck"),
        linguist=linguist_views(report),
        expert=_expert(report),
        panel_note=panel_not_asked(report),
        triage=_triage(report),
        failures=_failures(report),
        usage=_usage(report),
        cached_tokens=report.usage.cached_tokens,
        timings=tuple(
            (name.removesuffix("_ms").replace("_", " "), round(ms / 1000, 3))
            for name, ms in report.timings.items()
        ),
        claim_review=published_review(row, report, publisher, url),
    )


def published_review(row: CheckRow, report: Report, publisher: str, url: str) -> str:
    """The page's ClaimReview JSON-LD, or ``""``: only a human review is a fact-check a
    publisher stands behind, so only a check the service's reviewers reviewed (a review
    in force for every chat, not a chat's moderators') gets one, and only when the site
    names its ``publisher`` (``[site] publisher``)."""
    review = report.review
    if not publisher or review is None or not review.everywhere:
        return ""
    found = claim_review(
        report,
        url=url or f"/c/{row.id}",
        checked_on=row.created_at.date(),
        author=publisher,
        appearance=row.url,
    )
    return "" if found is None else json_ld(found)


def _repeat_note(row: CheckRow) -> str:
    if row.repeat_of is None:
        return ""
    kind = "the same post" if row.repeat_kind == "exact" else "a nearly identical post"
    return f"This answer comes from an earlier check of {kind}."


def _tree_line(report: Report) -> str:
    tree = report.tree
    if tree is None or tree.veracity is None:
        return ""
    decision = tree.decision or "no decision"
    why = TREE_STOPS.get(tree.stopped_by, tree.stopped_by)
    return (
        f"Tree of claims: {decision}; veracity {tree.veracity:.2f}, reliability "
        f"{tree.reliability or 0:.2f} after {tree.evaluations} judgements ({why})."
    )


def _debate_note(report: Report) -> str:
    debate = report.debate
    if not debate.held:
        return "No debate was held for this check."
    style = "RADAR's role-anchored debate" if debate.style == "radar" else "ZoFia's debate"
    parts = [f"{style}: {debate.rounds} of at most {debate.max_rounds} rounds."]
    if debate.decided_in_round is not None:
        parts.append(f"The judge decided in round {debate.decided_in_round}.")
    if debate.forced:
        parts.append("The judge did not decide on its own; the ruling was forced at the cap.")
    if debate.stopped_by == "probabilities":
        parts.append("The judge's token probabilities ended it.")
    return " ".join(parts)


def _expert(report: Report) -> FindingView | None:
    expert = report.analyses.expert
    if expert is None:
        return None
    who = " · ".join(part for part in (expert.domain, expert.expert_role) if part)
    parts = []
    if expert.knowledge_concordance:
        parts.append(("Knowledge concordance", expert.knowledge_concordance))
    if expert.logical_integrity:
        parts.append(("Logical integrity", expert.logical_integrity))
    return FindingView(
        title=f"Domain expert{f' ({who})' if who else ''}",
        lean=expert.lean or "",
        parts=tuple(parts),
        failed=failure(expert.status),
    )


def _triage(report: Report) -> FindingView | None:
    triage = report.triage
    # A checkable claim, found so at once, is the usual path: nothing to say.
    routine = triage is not None and triage.kind == "claim" and triage.status == "ok"
    if triage is None or (routine and not triage.overruled):
        return None
    sure = f" ({triage.probability:.0%})" if triage.probability is not None else ""
    parts = [("Why", triage.reason)] if triage.reason else []
    if triage.signs:
        parts.append(("Signs", "; ".join(triage.signs)))
    if triage.overruled:
        parts.append(("Overruled", f"it first said {triage.overruled}, too unsure to skip"))
    return FindingView(
        title=f"Triage: {triage.kind.replace('_', ' ')}{sure}",
        lean="",
        parts=tuple(parts),
        failed=failure(triage.status),
    )


def _failures(report: Report) -> tuple[str, ...]:
    """What failed or ran without a source: the report's own notes, then each failed step."""
    lines = [redact(note) for note in report.degraded]
    for name, status, _ in panel_steps(report):
        if status == "failed":
            lines.append(f"{name}: {STEP_FAILED}")
    failed_calls = report.usage.failed_calls
    if failed_calls:
        lines.append(f"{failed_calls} of {report.usage.calls} model calls failed.")
    return tuple(dict.fromkeys(lines))


def _usage(report: Report) -> tuple[UsageRow, ...]:
    usage = report.usage
    rows = [
        UsageRow(role, r.calls, r.prompt_tokens, r.completion_tokens, round(r.latency_ms / 1000, 2))
        for role, r in usage.by_role.items()
    ]
    seconds = round(sum(call.latency_ms for call in usage.log) / 1000, 2)
    rows.append(UsageRow("all", usage.calls, usage.prompt_tokens, usage.completion_tokens, seconds))
    return tuple(rows)
