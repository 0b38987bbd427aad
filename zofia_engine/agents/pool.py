"""Algorithm 1's evidence pool: the documents and the panel's analyses, as the
debaters and the judge read them, and the ids a debater may cite."""

from __future__ import annotations

from ..llm.base import ChatMessage
from ..prompting import render
from ..report import Analyses, ClaimResult, TreeSummary
from .context import PanelContext

__all__ = ["agent_failures", "evidence_pool", "findings"]


def _claim_line(c: ClaimResult) -> str:
    scores = ""
    if c.tree_veracity is not None and c.tree_reliability is not None:
        scores = f" (veracity {c.tree_veracity:.2f}, reliability {c.tree_reliability:.2f})"
    shown = "".join(f' Shown by [{q.evidence_id}]: "{q.text}"' for q in c.quotes[:2])
    return f'{c.kind} claim "{c.text}": {c.label}{scores}.{shown} {c.reason}'


_SETTLES = {"supports": "supports", "refutes": "contradicts"}


def findings(panel: PanelContext, claims: list[ClaimResult], grounded: list[str]) -> list[str]:
    """Each claim the evidence settled (ids in ``grounded``), in words, with the sentence
    that settled it: what the judge is reminded of before it rules."""
    lines = []
    for c in claims:
        if c.id not in grounded or c.label not in _SETTLES or not c.quotes:
            continue
        quote = c.quotes[0]
        said = panel.untrusted(f'"{c.text}": "{quote.text}"')
        lines.append(f"[{quote.evidence_id}] {_SETTLES[c.label]} the {c.kind} claim {said}")
    return lines


def evidence_pool(
    panel: PanelContext,
    analyses: Analyses,
    claims: list[ClaimResult],
    tree: TreeSummary | None = None,
) -> tuple[list[ChatMessage], list[str]]:
    """The evidence pool of Algorithm 1: documents (with their stance and source), then
    the panel's analyses, then the tree of claims' result when there is one."""
    lines = []
    done = [f for f in analyses.linguist if f.status == "ok"]
    if done:
        text = " | ".join(f"{f.dimension} (leans {f.lean}): {f.analysis}" for f in done)
        lines.append({"id": "linguist", "text": f"Linguist. {text}"})
    e = analyses.expert
    if e is not None and e.status == "ok":
        lines.append(
            {
                "id": "expert",
                "text": f"{e.expert_role} (leans {e.lean}). Knowledge: "
                f"{e.knowledge_concordance} Logic: {e.logical_integrity}",
            }
        )
    weighed = [e for e in panel.evidence if e.stance is not None and e.stance.status == "ok"]
    if weighed:
        text = "; ".join(
            f"{e.id} {e.stance.label}"
            + (" (support from this source counts against the post)" * e.reversed)
            for e in weighed
            if e.stance is not None
        )
        lines.append({"id": "stances", "text": f"Each document on the core claim: {text}."})
    checked = [c for c in claims if c.label is not None]
    if checked:
        text = " | ".join(_claim_line(c) for c in checked)
        text = panel.untrusted(text)  # the cited sentences are the evidence's own words
        lines.append({"id": "claims", "text": f"Claims read against the evidence. {text}"})
    if tree is not None and tree.veracity is not None and tree.reliability is not None:
        outcome = tree.decision or "no decision (between 0.4 and 0.6)"
        lines.append(
            {
                "id": "tree",
                "text": f"Tree of claims: the core claim's veracity is {tree.veracity:.2f} "
                f"with reliability {tree.reliability:.2f}, from {tree.evaluations} "
                f"judgements of it and its parts: {outcome}.",
            }
        )
    pool = [panel.evidence_message(), ChatMessage("user", render("analyses", lines=lines))]
    citable = ["post", *(item.id for item in panel.evidence), *(line["id"] for line in lines)]
    return pool, citable


def agent_failures(analyses: Analyses, claims: list[ClaimResult]) -> list[str]:
    """What failed among the panel's analyses and claims, in words, for ``degraded``."""
    notes = []
    failed = [f for f in analyses.linguist if f.status == "failed"]
    if failed:
        names = ", ".join(f.dimension for f in failed)
        notes.append(f"linguist failed on {names}: {failed[0].error}")
    if analyses.expert is not None and analyses.expert.status == "failed":
        notes.append(f"domain expert failed: {analyses.expert.error}")
    elif analyses.expert is not None and analyses.expert.error:
        notes.append(analyses.expert.error)
    bad = [c for c in claims if c.status == "failed"]
    if bad:
        notes.append(f"verification of {len(bad)} claim(s) failed: {bad[0].error}")
    return notes
