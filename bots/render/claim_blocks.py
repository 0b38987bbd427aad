"""The Claims section's parts, in the chat's words: each claim with its status in words
("contradicted by reuters.com"), and the tree of claims' outcome; with the claims'
scores for the report page (:func:`claim_scores`)."""

from __future__ import annotations

from zofia_engine.report import ClaimResult, EvidenceItem, Report
from zofia_engine.retrieval.credibility import counts_against

from .sentences import cite_line, listed, named_sources, source_name
from .words import ENGLISH, N_, Words

__all__ = ["TREE_STOPS", "claim_blocks", "claim_scores", "claim_status"]

#: why the tree of claims stopped, in words
TREE_STOPS = {
    "decisive": N_("the core claim was settled"),
    "converged": N_("it stopped changing"),
    "budget": N_("the budget of judgements was spent"),
    "exhausted": N_("nothing was left to split"),
}


def claim_blocks(report: Report, words: Words = ENGLISH) -> list[tuple[str, str]]:
    """Each claim as a heading and a body, its status in words; in a tree of claims,
    indented by depth, after the tree's outcome when it agrees with the verdict."""
    blocks = _tree(report, words)
    by_id = {item.id: item for item in report.evidence}
    for claim in report.claims:
        kind = words("Core claim") if claim.kind == "core" else words("Sub-claim")
        indent = "  " * claim.depth + ("└ " if claim.depth else "")
        dimension = f" ({claim.dimension})" if claim.dimension else ""
        parts = [claim.text]
        if claim.reason:
            parts.append(named_sources(claim.reason, report.evidence, words))
        if claim.status == "failed":
            parts.append(words("Its reading failed; the verdict used the rest."))
        for quote in claim.quotes:
            item = by_id.get(quote.evidence_id)
            parts.append(f"“{quote.text}”" + (f"\n— {cite_line(item, words)}" if item else ""))
        status = claim_status(claim, report.evidence, words)
        blocks.append((f"{indent}{kind}{dimension} · {status}", "\n\n".join(parts)))
    return blocks


def _tree(report: Report, words: Words) -> list[tuple[str, str]]:
    """The tree of claims' outcome, in words; shown only when it agrees with the verdict
    (a tree that reads "true" beside an unproven card would contradict it)."""
    t = report.tree
    if t is None or t.veracity is None:
        return []
    agrees = t.decision == report.verdict or (t.decision is None and report.verdict == "unproven")
    if not agrees:
        return []
    after = words.plural("after {count} judgement", "after {count} judgements", t.evaluations)
    if t.decision:
        said = words(
            "Taken together, the claim and its parts read {decision}, {after}",
            decision=t.decision,
            after=after,
        )
    else:
        said = words("Taken together, the claim and its parts settle nothing, {after}", after=after)
    why = words(TREE_STOPS[t.stopped_by]) if t.stopped_by in TREE_STOPS else ""
    body = said + (f" ({why})." if why else ".")
    decision = t.decision or words("not settled")
    return [(words("Tree of claims · {decision}", decision=decision), body)]


def claim_status(claim: ClaimResult, evidence: list[EvidenceItem], words: Words = ENGLISH) -> str:
    """A claim's status in words: "supported by reuters.com", "contradicted by
    Wikipedia (Springfield)", "not settled" …"""
    if claim.status == "failed":
        return words("could not be read")
    if claim.status == "skipped" or claim.label is None:
        return words("not read")
    by_id = {item.id: item for item in evidence}
    sources = [by_id[q.evidence_id] for q in claim.quotes if q.evidence_id in by_id]
    named = list(dict.fromkeys(source_name(item, words) for item in sources))
    names = listed(named, words("and")) or words("a source")
    if claim.label == "refutes" and claim.quotes:
        return words("contradicted by {names}", names=names)
    if claim.label == "supports" and claim.quotes:
        counting = [
            item
            for item in sources
            if item.credibility is None or not counts_against("supports", item.credibility)
        ]
        if sources and not counting:
            return words("supported only by {names}, whose support does not count", names=names)
        return words("supported by {names}", names=names)
    return words("not settled")


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
